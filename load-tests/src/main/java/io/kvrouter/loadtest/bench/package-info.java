/**
 * The HTTP load generator behind {@code kvrouter bench}: open-loop, streaming, against any
 * OpenAI-compatible server (a kvrouter ingress, several of them, or plain engines).
 *
 * <h2>Pieces</h2>
 *
 * <ul>
 *   <li>{@link io.kvrouter.loadtest.bench.BenchRequestSource} yields {@link
 *       io.kvrouter.loadtest.bench.BenchRequest}s (intended send offset, model, prompt as text,
 *       token ids or chat messages, {@code max_tokens}, group). Built-in sources: {@link
 *       io.kvrouter.loadtest.bench.SyntheticWorkloads} (shared prefix, random) timed by an {@link
 *       io.kvrouter.loadtest.bench.ArrivalSchedule} (Poisson or bursts); {@link
 *       io.kvrouter.loadtest.bench.WorkloadSource} adapts the workload package (traces and
 *       generators); {@link io.kvrouter.loadtest.bench.BenchRequestSource#adapt} adapts anything
 *       else.
 *   <li>{@link io.kvrouter.loadtest.bench.BenchRunner} sends each request at its time, spread over
 *       the targets by a {@link io.kvrouter.loadtest.bench.TargetPolicy}, and returns a {@link
 *       io.kvrouter.loadtest.bench.BenchRun} of {@link io.kvrouter.loadtest.bench.RequestOutcome}s
 *       plus engine scrapes ({@link io.kvrouter.loadtest.bench.EngineMetricsScraper}, {@link
 *       io.kvrouter.protocol.metrics.PrometheusText}).
 *   <li>{@link io.kvrouter.loadtest.bench.BenchSummary#of} turns a run into figures; {@link
 *       io.kvrouter.loadtest.bench.ResultsWriter} writes {@code results.json} and {@code
 *       report.md}; {@link io.kvrouter.loadtest.bench.ComparisonReport} puts runs side by side.
 * </ul>
 *
 * <h2>Use from code</h2>
 *
 * <pre>{@code
 * BenchConfig config = BenchConfig.defaults(List.of(URI.create("http://127.0.0.1:8080")), "my-model")
 *         .withEngineMetrics(List.of(URI.create("http://127.0.0.1:8000")));
 * BenchRequestSource source = SyntheticWorkloads.sharedPrefix(8, 16, 300, 30, 64,
 *         ArrivalSchedule.poisson(4.0, 42), 42);
 * BenchRun run = new BenchRunner(config).run(source);
 * ResultsWriter.write(Path.of("bench-results"), BenchSummary.of(run, ""));
 * }</pre>
 *
 * <h2>What is measured</h2>
 *
 * TTFT is the time to the first chunk with non-empty text, ITL the gaps between such chunks,
 * end-to-end the time to {@code [DONE]}; each from the intended send time (corrected for
 * coordinated omission) and from the actual send. Usage figures come from the final usage chunk
 * ({@code stream_options.include_usage}); the engine-side hit rate is Δhits/Δqueries of vLLM's
 * prefix-cache counters between a scrape before and one after the run.
 */
package io.kvrouter.loadtest.bench;
