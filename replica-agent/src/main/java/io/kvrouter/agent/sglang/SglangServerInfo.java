package io.kvrouter.agent.sglang;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What an SGLang server says of itself on {@code GET /get_server_info}: every field of its {@code
 * ServerArgs} at the top level, the scheduler's info, and {@code "version"} (sgl-project/sglang
 * {@code python/sglang/srt/entrypoints/http_server.py} at {@code 9c0549b7}, {@code
 * get_server_info}). SGLang has neither vLLM's {@code GET /version} nor its {@code
 * vllm:cache_config_info} metric, so this is where the agent learns the version and the block size.
 *
 * <p>The block size is {@code page_size}: the radix cache announces one {@code BlockStored} per
 * page of {@code page_size} tokens ({@code python/sglang/srt/mem_cache/events.py} at {@code
 * cc6971b7}, {@code KVCacheEventMixin._record_store_event}), so the router's block size must equal
 * it ({@code --page-size}; SGLang's default of 1 makes every token a block).
 *
 * @param version the SGLang version, or null when the answer has none
 * @param pageSize tokens per page (the event block size), or 0 when unknown
 * @param dpSize data-parallel ranks ({@code dp_size}), 1 when absent
 * @param attentionDp whether {@code enable_dp_attention} is on (each attention rank then has its
 *     own radix cache and its own event publisher)
 * @param kvEventsConfig the {@code --kv-events-config} JSON as given, or null when absent
 */
public record SglangServerInfo(
    String version, int pageSize, int dpSize, boolean attentionDp, String kvEventsConfig) {

  /** SGLang's prefix-cache block hash: SHA-256 chained over pages ({@code get_hash_str}). */
  public static final String HASH_ALGO = "sha256";

  /** What nothing answered reads as. */
  public static final SglangServerInfo UNKNOWN = new SglangServerInfo(null, 0, 1, false, null);

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Reads a {@code /get_server_info} body; {@link #UNKNOWN} when it is not a JSON object. */
  public static SglangServerInfo parse(String body) {
    JsonNode root;
    try {
      root = JSON.readTree(body);
    } catch (Exception notJson) {
      return UNKNOWN;
    }
    if (root == null || !root.isObject()) {
      return UNKNOWN;
    }
    JsonNode v = root.path("version");
    JsonNode kv = root.path("kv_events_config");
    return new SglangServerInfo(
        v.isValueNode() && !v.asText().isBlank() ? v.asText() : null,
        Math.max(0, root.path("page_size").asInt(0)),
        Math.max(1, root.path("dp_size").asInt(1)),
        root.path("enable_dp_attention").asBoolean(false),
        kv.isTextual() && !kv.asText().isBlank() ? kv.asText() : null);
  }
}
