package io.kvrouter.protocol.engine;

/**
 * Replay reply layout of vLLM's ROUTER socket (vLLM {@code vllm/distributed/kv_events.py}, {@code
 * _service_replay}; see {@code docs/kv-events.md}, section 1).
 */
public enum ReplayLayout {
  /**
   * {@code [id, "", seq8, payload]} and end {@code [id, "", END, ""]}: vLLM before PR #45177,
   * SGLang.
   */
  WITHOUT_TOPIC,
  /** {@code [id, "", topic, seq8, payload]} and end {@code [id, "", "", END, ""]}: vLLM ≥0.26. */
  WITH_TOPIC
}
