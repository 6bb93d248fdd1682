package io.kvrouter.protocol;

/**
 * Where a replica holds a KV block. vLLM calls this the event's {@code medium} ("GPU", "CPU",
 * "STORAGE"); SGLang uses "GPU", "CPU_PINNED", "DISK", "EXTERNAL" (vLLM {@code
 * vllm/distributed/kv_events.py}, SGLang {@code python/sglang/srt/disaggregation/kv_events.py}; see
 * {@code docs/kv-events.md}, section 2).
 */
public enum Tier {
  GPU,
  CPU,
  DISK;

  /**
   * Maps an engine's medium string to a tier; {@code null} means GPU (vLLM omits the default).
   *
   * @return the tier, or {@code null} when the medium is unknown (callers skip such blocks)
   */
  public static Tier fromMedium(String medium) {
    if (medium == null) {
      return GPU;
    }
    return switch (medium.toUpperCase(java.util.Locale.ROOT)) {
      case "GPU" -> GPU;
      case "CPU", "CPU_PINNED" -> CPU;
      case "DISK", "STORAGE", "EXTERNAL" -> DISK;
      default -> null;
    };
  }
}
