package io.kvrouter.ingress.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One request's trace: the request span and its phases ({@code tokenize}, {@code decide}, {@code
 * queue}, {@code first_byte}, {@code stream}), each a child span started and ended once. Carried as
 * a value with the request through its attempts; every method is cheap, and with tracing off every
 * method does nothing except handing the client's trace headers on to the engine. Thread-safe
 * (spans are).
 */
public final class RequestTrace {

  /** W3C Trace Context headers (https://www.w3.org/TR/trace-context/). */
  public static final String TRACEPARENT = "traceparent";

  public static final String TRACESTATE = "tracestate";

  /** No trace and no client headers. */
  public static final RequestTrace NONE = new RequestTrace(null, null, null, null);

  private final Tracer tracer;
  private final Span span;
  private final String clientTraceparent;
  private final String clientTracestate;
  // Phases started and not yet ended: the request span ends them first, so no child outlives it
  // (a stream's phase and the request both end at the stream's last byte, on callbacks that may run
  // in either order).
  private final Set<Phase> open; // null when not recording

  private RequestTrace(
      Tracer tracer, Span span, String clientTraceparent, String clientTracestate) {
    this.tracer = tracer;
    this.span = span;
    this.open = span == null ? null : ConcurrentHashMap.newKeySet();
    this.clientTraceparent = clientTraceparent;
    this.clientTracestate = clientTracestate;
  }

  static RequestTrace passThrough(String traceparent, String tracestate) {
    return traceparent == null ? NONE : new RequestTrace(null, null, traceparent, tracestate);
  }

  static RequestTrace recording(Tracer tracer, Span span) {
    return new RequestTrace(tracer, span, null, null);
  }

  /** One phase of the request: a child span, ended once. */
  public static final class Phase {
    static final Phase NONE = new Phase(null, null);

    private final Span span;
    private final Set<Phase> open;
    private final AtomicBoolean ended = new AtomicBoolean();

    private Phase(Span span, Set<Phase> open) {
      this.span = span;
      this.open = open;
      if (open != null) {
        open.add(this);
      }
    }

    private boolean ending() {
      if (span == null || !ended.compareAndSet(false, true)) {
        return false;
      }
      open.remove(this);
      return true;
    }

    /** Adds an attribute (nothing when not recording). */
    public Phase set(String key, String value) {
      if (span != null && value != null) {
        span.setAttribute(key, value);
      }
      return this;
    }

    /** Adds a numeric attribute. */
    public Phase set(String key, long value) {
      if (span != null) {
        span.setAttribute(key, value);
      }
      return this;
    }

    /** Ends the phase (once: later calls do nothing). */
    public void end() {
      if (ending()) {
        span.end();
      }
    }

    /** Ends the phase as failed. */
    public void fail(String why) {
      if (ending()) {
        span.setStatus(StatusCode.ERROR, why == null ? "" : why);
        span.end();
      }
    }

    /** The W3C headers that make the callee's spans children of this phase. */
    Map<String, String> headers() {
      Map<String, String> out = new LinkedHashMap<>(2);
      W3CTraceContextPropagator.getInstance()
          .inject(Context.root().with(span), out, (carrier, k, v) -> carrier.put(k, v));
      return out;
    }
  }

  /** True when this trace records spans. */
  public boolean recording() {
    return span != null;
  }

  /** Starts a phase: {@code tokenize}, {@code decide}, {@code queue} or {@code stream}. */
  public Phase phase(String name) {
    if (span == null) {
      return Phase.NONE;
    }
    return new Phase(
        tracer.spanBuilder(name).setParent(Context.root().with(span)).startSpan(), open);
  }

  /**
   * Starts the call to an engine, up to its first byte ({@code first_byte}, a client span): its
   * context is what the engine receives ({@link #engineHeaders}).
   */
  public Phase engineCall(String replicaId) {
    if (span == null) {
      return Phase.NONE;
    }
    return new Phase(
            tracer
                .spanBuilder("first_byte")
                .setParent(Context.root().with(span))
                .setSpanKind(SpanKind.CLIENT)
                .startSpan(),
            open)
        .set("kvrouter.replica", replicaId);
  }

  /**
   * The trace headers to send to the engine for {@code call}: the ingress's own context when
   * recording, the client's headers unchanged when not, nothing when there are none.
   */
  public Map<String, String> engineHeaders(Phase call) {
    if (span == null) {
      if (clientTraceparent == null) {
        return Map.of();
      }
      Map<String, String> out = new LinkedHashMap<>(2);
      out.put(TRACEPARENT, clientTraceparent);
      if (clientTracestate != null) {
        out.put(TRACESTATE, clientTracestate);
      }
      return out;
    }
    return call.headers();
  }

  /** Adds an attribute to the request span. */
  public RequestTrace set(String key, String value) {
    if (span != null && value != null) {
      span.setAttribute(key, value);
    }
    return this;
  }

  /** Adds a numeric attribute to the request span. */
  public RequestTrace set(String key, long value) {
    if (span != null) {
      span.setAttribute(key, value);
    }
    return this;
  }

  /** Ends the request span with the response's status (5xx marks it failed, as for servers). */
  public void end(int status) {
    if (span == null) {
      return;
    }
    for (Phase p : open) {
      p.end();
    }
    span.setAttribute(AttributeKey.longKey("http.response.status_code"), status);
    if (status >= 500) {
      span.setStatus(StatusCode.ERROR);
    }
    span.end();
  }
}
