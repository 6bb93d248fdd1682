package io.kvrouter.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.kvrouter.protocol.keys.SpeculativeDecoding;
import java.util.Locale;
import java.util.Objects;

/**
 * Which engine serves a replica, as its agent knows it: for operators reading {@code
 * /admin/replicas} and the dashboard, and for telling engines apart when their KV events do not
 * line up with the router's block keys. Travels inside {@link ReplicaInfo} (CBOR).
 *
 * @param kind the engine software: {@link #VLLM}, {@code sglang}, {@code tensorrt-llm}, or {@link
 *     #UNKNOWN}
 * @param version what the engine's {@code GET /version} answered ({@code {"version": "..."}} on
 *     vLLM), or {@link #UNKNOWN}
 * @param hashAlgo the engine's prefix-caching hash algorithm (vLLM's {@code
 *     --prefix-caching-hash-algo}: {@code sha256}, {@code sha256_cbor}, {@code builtin}, ...), or
 *     {@link #UNKNOWN}. Router block keys never depend on it (the agent keys blocks from their
 *     token ids); it is shown to explain an engine, not used
 * @param blockSize the engine's KV block size as the agent learned it from the engine (its metrics
 *     or its events), 0 when it has not
 * @param speculative the engine's speculative-decoding method as the router keys its cache hits
 *     ({@link SpeculativeDecoding}: {@code kvrouter.models."m".speculative-method}, checked by the
 *     alignment probe): trackers credit a replica whose method drops the last matched block with
 *     one block less. {@code none} when not set, and in messages without it
 */
public record EngineIdentity(
    String kind,
    String version,
    String hashAlgo,
    int blockSize,
    @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = EngineIdentity.NoneSet.class)
        String speculative) {

  /** What a field reads as when the agent does not know it. */
  public static final String UNKNOWN = "unknown";

  /** What {@link #speculative} reads as without speculative decoding. */
  public static final String NONE = "none";

  /** The engine kind of vLLM (and of engines that speak its APIs and events, the sim engine). */
  public static final String VLLM = "vllm";

  /** An engine nothing is known about: what announcements without the field read as. */
  public static final EngineIdentity NOTHING_KNOWN =
      new EngineIdentity(UNKNOWN, UNKNOWN, UNKNOWN, 0);

  /** An identity without speculative decoding. */
  public EngineIdentity(String kind, String version, String hashAlgo, int blockSize) {
    this(kind, version, hashAlgo, blockSize, null);
  }

  public EngineIdentity {
    kind = orUnknown(kind);
    version = orUnknown(version);
    hashAlgo = orUnknown(hashAlgo);
    blockSize = Math.max(0, blockSize);
    speculative =
        speculative == null || speculative.isBlank()
            ? NONE
            : speculative.trim().toLowerCase(Locale.ROOT);
  }

  /** This identity with {@code size} as the engine's block size. */
  public EngineIdentity withBlockSize(int size) {
    return new EngineIdentity(kind, version, hashAlgo, size, speculative);
  }

  /** This identity with {@code method} as the engine's speculative-decoding method. */
  public EngineIdentity withSpeculative(SpeculativeDecoding method) {
    return new EngineIdentity(kind, version, hashAlgo, blockSize, method.method());
  }

  /**
   * The speculative-decoding rule trackers predict this engine's cache hits with; {@link
   * SpeculativeDecoding#NONE} for a method this build does not know (a newer agent's), so an
   * unknown method never costs a predicted hit it would not.
   */
  public SpeculativeDecoding speculativeDecoding() {
    try {
      return SpeculativeDecoding.of(speculative);
    } catch (IllegalArgumentException unknown) {
      return SpeculativeDecoding.NONE;
    }
  }

  private static String orUnknown(String s) {
    return s == null || s.isBlank() ? UNKNOWN : s;
  }

  /** Jackson's filter: no speculative decoding is not written (the bytes older agents send). */
  static final class NoneSet {
    @Override
    public boolean equals(Object value) {
      return NONE.equals(value);
    }

    @Override
    public int hashCode() {
      return NONE.hashCode();
    }
  }

  /** Jackson's filter: an identity with nothing known is not written. */
  static final class NothingKnown {
    @Override
    public boolean equals(Object value) {
      return Objects.equals(value, NOTHING_KNOWN);
    }

    @Override
    public int hashCode() {
      return NOTHING_KNOWN.hashCode();
    }
  }
}
