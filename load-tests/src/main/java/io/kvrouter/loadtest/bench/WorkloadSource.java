package io.kvrouter.loadtest.bench;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;

/**
 * Adapts a {@link Workload} of the workload package (Mooncake traces, SGLang generated shared
 * prefix, llm-d B2B, multi-turn chat) to a {@link BenchRequestSource}: each request becomes a
 * token-id prompt for {@code /v1/completions} with the workload's output length as {@code
 * max_tokens} and its session as the group.
 *
 * <p>Send times are the workload's arrival times (apply {@link Workload#speedUp} first to replay
 * faster), or those of an {@link ArrivalSchedule} when one is given (the workload's prompts at a
 * rate of the user's choosing). Token ids of synthetic workloads lie in {@code [0,
 * TokenExpander.VOCAB_SIZE)}; {@code vocabSize > 0} folds them into {@code [0, vocabSize)} with a
 * modulo, a fixed mapping that keeps equal prefixes equal, for models with a smaller vocabulary.
 *
 * <p>Cost: each request's token ids are expanded when the runner asks for it (O(prompt length)
 * time, 4 bytes per token until the request body is encoded).
 */
public final class WorkloadSource {

  private WorkloadSource() {}

  /**
   * @param arrivals send times to use instead of the workload's, or {@code null} to keep its own
   * @param vocabSize fold token ids below this, or 0 to send them as they are
   */
  public static BenchRequestSource of(Workload workload, ArrivalSchedule arrivals, int vocabSize) {
    if (vocabSize < 0) {
      throw new IllegalArgumentException("vocabSize must be >= 0, got " + vocabSize);
    }
    return BenchRequestSource.adapt(
        workload.name(),
        workload.requests(),
        r -> toBenchRequest(r, arrivals, vocabSize),
        workload.size());
  }

  static BenchRequest toBenchRequest(WorkloadRequest r, ArrivalSchedule arrivals, int vocabSize) {
    int[] ids = r.promptTokenIds();
    if (vocabSize > 0) {
      for (int i = 0; i < ids.length; i++) {
        ids[i] = Math.floorMod(ids[i], vocabSize);
      }
    }
    long offset =
        arrivals != null
            ? arrivals.nextOffsetNanos()
            : Math.multiplyExact(r.arrivalMicros(), 1000L);
    return new BenchRequest(
        offset, null, BenchPrompt.tokens(ids), Math.max(1, r.outputLength()), r.session());
  }
}
