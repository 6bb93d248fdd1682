package io.kvrouter.agent.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * How a request names the SGLang data-parallel rank that must serve it: the body field {@code
 * data_parallel_rank} ({@code GenerateReqInput} in sgl-project/sglang {@code
 * python/sglang/srt/managers/io_struct.py}, "For data parallel rank routing", read by the OpenAI
 * routes' requests too), where vLLM reads the {@code X-data-parallel-rank} header. Without it
 * SGLang's data-parallel controller picks a rank itself (round robin by default), and a probe
 * served by another rank stores its blocks on that rank's event stream.
 */
public final class SglangRankRouting {

  private static final ObjectMapper JSON = new ObjectMapper();

  private SglangRankRouting() {}

  /**
   * {@code json} with {@code data_parallel_rank} set to {@code rank}; unchanged when {@code rank}
   * is negative or the body is not a JSON object.
   */
  public static String withRank(String json, int rank) {
    if (rank < 0) {
      return json;
    }
    try {
      JsonNode root = JSON.readTree(json);
      if (!(root instanceof ObjectNode o)) {
        return json;
      }
      o.put("data_parallel_rank", rank);
      return JSON.writeValueAsString(o);
    } catch (Exception notJson) {
      return json;
    }
  }
}
