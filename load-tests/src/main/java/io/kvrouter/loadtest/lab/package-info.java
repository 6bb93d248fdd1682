/**
 * The policy lab ({@code kvrouter lab}): replays a workload in virtual time against N simulated
 * engines and K routers, once per routing policy, and reports hit rates, latencies and balance side
 * by side.
 *
 * <h2>Run</h2>
 *
 * <pre>
 * ./kvrouter lab --workload mooncake-conversation --replicas 8 --out DIR   (bundled trace)
 * ./kvrouter lab --trace my-trace.jsonl --replicas 8 --out DIR             (any Mooncake-format file)
 * ./kvrouter lab --workload mooncake-conversation --replicas 8 --capacity-blocks 131072 --out DIR
 * ./kvrouter lab --workload mooncake-conversation --routers 4 --propagation-delay-ms 50 --out DIR
 * ./kvrouter lab --workload mooncake-conversation --routers 2 --propagation-delay-ms 20 --kill-replica r3@1200 --drop-events 0.2
 * ./kvrouter lab --workload mooncake-conversation --policies kvrouter --kill-replica r3@1770 --kill-migration 1200,1770,2300
 * ./kvrouter lab --workload sglang-gsp --workload-param groups=16 --routers 4 --propagation-delay-ms 200 --burst 256
 * ./kvrouter lab --workload mooncake-conversation --replicas 8 --capacity-blocks 16384 --cpu-blocks 65536
 * ./kvrouter lab --workload mooncake-conversation --replicas 8 --capacity-blocks 131072 --adapters 16
 * ./kvrouter lab --workload mooncake-conversation --replicas 8 --capacity-blocks 65536 --images 16
 * </pre>
 *
 * {@code --out DIR} writes {@code results.json} ({@link io.kvrouter.loadtest.lab.ResultsJson}),
 * {@code report.md} ({@link io.kvrouter.loadtest.lab.LabReport}) and PNG charts ({@link
 * io.kvrouter.loadtest.lab.LabCharts}: TTFT CDF of every policy, uncached prefill tokens per second
 * of every replica over time, one chart per policy).
 *
 * <h2>Pieces</h2>
 *
 * <ul>
 *   <li>{@link io.kvrouter.loadtest.lab.PolicyLab}: computes the prompts' router keys once ({@link
 *       io.kvrouter.loadtest.lab.PromptKeys}, kv-tracker's {@code BlockKeys}, memoised per trace
 *       block id) and the single-cache references ({@link
 *       io.kvrouter.loadtest.lab.SingleCacheBound}: one unlimited cache, and on finite capacity one
 *       LRU cache of every replica's capacity), then runs one {@link
 *       io.kvrouter.loadtest.lab.LabSimulation} per policy on a 2-thread pool.
 *   <li>{@link io.kvrouter.loadtest.lab.LabSimulation}: the discrete-event loop; routers are {@code
 *       KvTrackerCore}s, each with its own policy instance; engines are {@code LabEngine}s whose KV
 *       events (router keys plus engine hashes) go to every router's index, removals through the
 *       index's engine-hash bridge.
 *   <li>{@code LabEngine} / {@code LabKvCache}: the sim engine's scheduler and prefix cache
 *       semantics in compact form (why, and how they differ: see {@code LabEngine}); checked
 *       against {@code SimEngineCore} by {@code LabEngineTest}.
 *   <li>{@code LabCpuTier}: the engines' optional CPU offload tier ({@code --cpu-blocks}), as the
 *       sim's {@code CpuOffloadTier}; {@code LabAdapters}: the requests' optional LoRA adapters
 *       ({@code --adapters}), keyed into their blocks, loaded by the engines, steered by kvrouter,
 *       and images ({@code --images}), placeholder tokens keyed with the image into their blocks.
 * </ul>
 *
 * <h2>Choices</h2>
 *
 * Block size 16 for engines and routers (the router's default and vLLM's; the Dynamo mocker's
 * default is 64, which would make the router coarser than the engine: a router key must cover
 * exactly one engine block). "Unlimited" capacity is 2^40 blocks per engine, so the mocker's KV
 * utilisation term is 0 there. Arrivals go to routers round robin. The engines' timing is the sim's
 * default {@code MockerTimingModel} at speed-up 1.
 */
package io.kvrouter.loadtest.lab;
