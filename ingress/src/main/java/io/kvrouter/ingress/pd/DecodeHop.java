package io.kvrouter.ingress.pd;

import io.kvrouter.ingress.api.EngineExchange;

/**
 * What is sent to the replica a request was placed on, and how the request got there: straight, or
 * after a prefill hop on another replica (or a prefill hop that failed).
 *
 * @param exchange the exchange with the placed replica
 * @param path how the prompt was prefilled
 * @param prefillReplica the replica that prefilled the prompt and handed its KV over; null unless
 *     {@code path} is {@link Path#PREFILL_DECODE}
 */
public record DecodeHop(EngineExchange exchange, Path path, String prefillReplica) {

  /** How a request's prompt was prefilled, by the label the metric and the header give it. */
  public enum Path {
    /** Not disaggregated: the model has no prefill replicas, or the API takes no prefill hop. */
    DIRECT("direct"),
    /** Disaggregated model, but the prompt is short or mostly cached where it decodes. */
    PREFILL_SKIPPED("prefill_skipped"),
    /** Prefilled on a prefill replica, decoded on the placed replica with the transferred KV. */
    PREFILL_DECODE("prefill_decode"),
    /** No prefill replica managed: the placed replica prefills it itself. */
    PREFILL_FALLBACK("prefill_fallback");

    private final String label;

    Path(String label) {
      this.label = label;
    }

    /** The label as exported ({@code hop="..."}) and sent ({@code x-kvrouter-hop}). */
    public String label() {
      return label;
    }
  }

  public DecodeHop {
    if ((path == Path.PREFILL_DECODE) != (prefillReplica != null)) {
      throw new IllegalArgumentException(
          "a prefill replica goes with prefill_decode only, was " + path + ", " + prefillReplica);
    }
  }

  /** Sent as it is, with no prefill hop, on {@code path}. */
  static DecodeHop straight(EngineExchange exchange, Path path) {
    return new DecodeHop(exchange, path, null);
  }
}
