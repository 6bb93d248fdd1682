package io.kvrouter.agent.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The load a TensorRT-LLM engine reports on {@code trtllm-serve}'s {@code GET /metrics}: not
 * Prometheus text but a JSON array of iteration statistics, one object per executor iteration since
 * the last call.
 *
 * <p>What the source says (NVIDIA/TensorRT-LLM):
 *
 * <ul>
 *   <li>{@code /metrics} is {@code get_iteration_stats}, which collects {@code
 *       generator.get_stats_async(2)} into a list ({@code tensorrt_llm/serve/openai_server.py} at
 *       {@code 00057725}). The iterable is the executor's one {@code IterationResult}: each stat is
 *       taken off its queue ({@code json.loads} of the C++ JSON), so a stat is answered once and
 *       {@code /metrics} drains the queue as {@code /kv_cache_events} does; the drain ends when one
 *       wait of 2 s finds nothing, after which the result stays done, answering {@code []} at once,
 *       until a new request is submitted ({@code mark_undone} in {@code
 *       _maybe_initialize_iteration_results}; {@code tensorrt_llm/executor/result.py} at {@code
 *       005bc848}). So an answer with stats takes about 2 s, and {@code []} is common: no iteration
 *       ran, or none since the last request was submitted, or stats are off ({@code
 *       enable_iter_perf_stats} on the PyTorch backend), or another reader took them.
 *   <li>each object is the C++ {@code IterationStats} as {@code JsonSerialization::toJsonStr}
 *       writes it: {@code iter}, {@code numActiveRequests} (requests in the in-flight batch),
 *       {@code numQueuedRequests} (accepted, not yet scheduled), and {@code kvCacheStats} with
 *       {@code maxNumBlocks}, {@code freeNumBlocks}, {@code usedNumBlocks}, {@code tokensPerBlock},
 *       ... ({@code cpp/tensorrt_llm/executor/jsonSerialization.cpp} at {@code 086f6921});
 *   <li>{@code usedNumBlocks} is {@code getNumAllocatedBlocks()} = {@code maxNumBlocks -
 *       freeNumBlocks}, the free blocks being the eviction policy's primary-level ones, and a
 *       released block kept for reuse goes back to the eviction policy ({@code
 *       BlockManager::getNumFreeBlocks}, {@code releaseBlock}; {@code
 *       cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp} at {@code b35ac1b6}): used blocks are
 *       the ones held by requests in flight, cached but reusable blocks do not count, and {@code
 *       usedNumBlocks / maxNumBlocks} is the fraction the heartbeat wants (as vLLM's {@code
 *       kv_cache_usage_perc}).
 * </ul>
 *
 * <p>The figures are the latest iteration's (highest {@code iter}). Plain Java; immutable.
 *
 * @param running {@code numActiveRequests}
 * @param waiting {@code numQueuedRequests}
 * @param kvUsage {@code usedNumBlocks / maxNumBlocks}, 0 when the engine gave no KV cache stats
 */
public record TrtllmIterationStats(int running, int waiting, double kvUsage) {

  /**
   * What an empty answer means: no stat, so no iteration seen. The agent reports the engine idle
   * rather than keep the last figures: the last stat before the engine goes quiet is the iteration
   * that finished its last request (still counted active), and kept figures would hold an idle
   * replica busy until something is sent to it, which the router then avoids doing. Reading idle
   * when stats were only withheld (a busy engine with no new submission) corrects itself: the next
   * request the router sends re-opens the stats.
   */
  public static final TrtllmIterationStats IDLE = new TrtllmIterationStats(0, 0, 0.0);

  private static final ObjectMapper JSON = new ObjectMapper();

  public TrtllmIterationStats {
    if (running < 0 || waiting < 0 || !(kvUsage >= 0.0 && kvUsage <= 1.0)) {
      throw new IllegalArgumentException(
          "iteration stats out of range: running "
              + running
              + ", waiting "
              + waiting
              + ", kv usage "
              + kvUsage);
    }
  }

  /**
   * Parses a {@code /metrics} answer.
   *
   * @return the latest iteration's figures, {@link #IDLE} for an empty array
   * @throws IllegalArgumentException when the body is not an array of iteration-stats objects (the
   *     message says what is wrong; the load is then unknown)
   */
  public static TrtllmIterationStats parse(String body) {
    JsonNode root;
    try {
      root = JSON.readTree(body == null ? "" : body);
    } catch (Exception notJson) {
      throw new IllegalArgumentException(
          "TensorRT-LLM /metrics is not JSON: " + notJson.getMessage(), notJson);
    }
    if (root == null || !root.isArray()) {
      throw new IllegalArgumentException(
          "TensorRT-LLM /metrics is not a JSON array of iteration stats: "
              + (root == null || root.isMissingNode() ? "empty body" : root.getNodeType()));
    }
    JsonNode latest = null;
    for (JsonNode stat : root) {
      if (!stat.isObject()) {
        throw new IllegalArgumentException(
            "TensorRT-LLM /metrics holds a " + stat.getNodeType() + " where a stat object goes");
      }
      if (latest == null || stat.path("iter").asLong(-1) >= latest.path("iter").asLong(-1)) {
        latest = stat;
      }
    }
    if (latest == null) {
      return IDLE;
    }
    return new TrtllmIterationStats(
        count(latest, "numActiveRequests"), count(latest, "numQueuedRequests"), usage(latest));
  }

  /** A required non-negative integer field of a stat. */
  private static int count(JsonNode stat, String field) {
    JsonNode v = stat.get(field);
    if (v == null || !v.canConvertToInt() || !v.isIntegralNumber() || v.intValue() < 0) {
      throw new IllegalArgumentException(
          "TensorRT-LLM iteration stat " + stat.path("iter") + " has no count " + field + ": " + v);
    }
    return v.intValue();
  }

  /** {@code usedNumBlocks / maxNumBlocks}; 0 without {@code kvCacheStats} or without blocks. */
  private static double usage(JsonNode stat) {
    JsonNode kv = stat.get("kvCacheStats");
    if (kv == null || kv.isNull()) {
      return 0.0;
    }
    if (!kv.isObject()) {
      throw new IllegalArgumentException(
          "TensorRT-LLM iteration stat " + stat.path("iter") + " has kvCacheStats " + kv);
    }
    long max = kv.path("maxNumBlocks").asLong(0);
    long used = kv.path("usedNumBlocks").asLong(-1);
    if (used < 0 && kv.has("freeNumBlocks")) {
      used = max - kv.path("freeNumBlocks").asLong(0);
    }
    if (max <= 0 || used < 0) {
      return 0.0;
    }
    return Math.min(1.0, (double) used / max);
  }
}
