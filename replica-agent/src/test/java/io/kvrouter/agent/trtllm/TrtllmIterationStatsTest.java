package io.kvrouter.agent.trtllm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * {@link TrtllmIterationStats} on {@code trtllm-serve}'s {@code GET /metrics} answers: a JSON array
 * of {@code IterationStats} objects with the fields {@code JsonSerialization::toJsonStr} writes
 * (NVIDIA/TensorRT-LLM {@code cpp/tensorrt_llm/executor/jsonSerialization.cpp} at {@code
 * 086f6921}), and input that is not that format.
 */
class TrtllmIterationStatsTest {

  /** One iteration's stats, every field the serializer writes, with the figures that matter. */
  private static String stat(long iter, int active, int queued, int max, int free) {
    return """
        {"timestamp":"12-07-2026 10:00:00","iter":%d,"iterLatencyMS":21.5,
         "newActiveRequestsQueueLatencyMS":0.1,"numNewActiveRequests":1,
         "numActiveRequests":%d,"numQueuedRequests":%d,"numCompletedRequests":0,
         "maxNumActiveRequests":256,"maxBatchSizeStatic":256,"maxBatchSizeTunerRecommended":256,
         "maxBatchSizeRuntime":256,"maxNumTokensStatic":8192,"maxNumTokensTunerRecommended":8192,
         "maxNumTokensRuntime":8192,"gpuMemUsage":70000000000,"cpuMemUsage":1000000,
         "pinnedMemUsage":0,
         "kvCacheStats":{"maxNumBlocks":%d,"freeNumBlocks":%d,"usedNumBlocks":%d,
           "tokensPerBlock":32,"allocTotalBlocks":120,"allocNewBlocks":80,"reusedBlocks":40,
           "missedBlocks":80,"cacheHitRate":0.33},
         "staticBatchingStats":null,
         "inflightBatchingStats":{"numScheduledRequests":3,"numContextRequests":1,
           "numGenRequests":2,"numPausedRequests":0,"numCtxTokens":512,"microBatchId":0,
           "avgNumDecodedTokensPerIter":1.0},
         "specDecodingStats":null}
        """
        .formatted(iter, active, queued, max, free, max - free);
  }

  @Test
  void latestIterationGivesRunningWaitingAndTheBlocksHeldByRequests() {
    // Drained in one answer: iterations 41 to 43, not necessarily in order.
    String body =
        "["
            + stat(42, 5, 2, 1000, 700)
            + ","
            + stat(43, 3, 1, 1000, 750)
            + ","
            + stat(41, 6, 4, 1000, 600)
            + "]";

    TrtllmIterationStats s = TrtllmIterationStats.parse(body);

    assertThat(s.running()).isEqualTo(3);
    assertThat(s.waiting()).isEqualTo(1);
    assertThat(s.kvUsage()).isCloseTo(0.25, within(1e-9));
  }

  @Test
  void withoutUsedBlocksTheFreeOnesGiveTheUsage() {
    String body =
        """
        [{"iter":7,"numActiveRequests":2,"numQueuedRequests":0,
          "kvCacheStats":{"maxNumBlocks":200,"freeNumBlocks":150}}]
        """;

    assertThat(TrtllmIterationStats.parse(body).kvUsage()).isCloseTo(0.25, within(1e-9));
  }

  @Test
  void statsWithoutKvCacheStatsStillGiveTheRequestCounts() {
    TrtllmIterationStats s =
        TrtllmIterationStats.parse(
            "[{\"iter\":1,\"numActiveRequests\":4,\"numQueuedRequests\":9,\"kvCacheStats\":null}]");

    assertThat(s).isEqualTo(new TrtllmIterationStats(4, 9, 0.0));
  }

  @Test
  void anEmptyAnswerReadsAsIdle() {
    assertThat(TrtllmIterationStats.parse("[]")).isEqualTo(TrtllmIterationStats.IDLE);
    assertThat(TrtllmIterationStats.parse(" [ ] ")).isEqualTo(new TrtllmIterationStats(0, 0, 0));
  }

  /** {@code body} is refused with a message that holds {@code says}. */
  private static void rejects(String body, String says) {
    assertThatThrownBy(() -> TrtllmIterationStats.parse(body))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(says);
  }

  @Test
  void prometheusTextIsRejectedWithAMessageThatSaysSo() {
    rejects("vllm:num_requests_running 3\n", "TensorRT-LLM /metrics is not JSON");
  }

  @Test
  void malformedAnswersFailClearly() {
    rejects("", "empty body");
    rejects("{\"iter\":1}", "not a JSON array");
    rejects("[\"{\\\"iter\\\":1}\"]", "STRING where a stat object goes");
    rejects("[{\"iter\":1,\"numQueuedRequests\":0}]", "no count numActiveRequests");
    rejects("[{\"iter\":1,\"numActiveRequests\":-2,\"numQueuedRequests\":0}]", "-2");
    rejects("[{\"iter\":1,\"numActiveRequests\":\"3\",\"numQueuedRequests\":0}]", "\"3\"");
    rejects("[{\"iter\":1,\"numActiveRequests\":1}]", "no count numQueuedRequests");
    rejects(
        "[{\"iter\":1,\"numActiveRequests\":1,\"numQueuedRequests\":0,\"kvCacheStats\":[1,2]}]",
        "kvCacheStats [1,2]");
  }
}
