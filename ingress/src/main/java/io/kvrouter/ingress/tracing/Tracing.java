package io.kvrouter.ingress.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The ingress's tracing: an OpenTelemetry SDK tracer exporting over OTLP/HTTP when {@link
 * TracingSettings#otlpEndpoint()} is set, and nothing at all otherwise (no SDK, no exporter, no
 * thread, no traffic). Either way a client's W3C {@code traceparent} is honoured: with tracing on,
 * the request's span continues the client's trace and the engine receives the traceparent of the
 * ingress's call to it; with tracing off, the client's own {@code traceparent} and {@code
 * tracestate} reach the engine unchanged.
 *
 * <p>One instance per ingress node (several share a JVM in tests and the demo), never registered
 * globally. Thread-safe; {@link #close} flushes what is buffered.
 */
public final class Tracing implements AutoCloseable {

  static final String INSTRUMENTATION = "io.kvrouter.ingress";

  private static final TextMapGetter<Map<String, String>> GETTER =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };

  private final SdkTracerProvider provider;
  private final Tracer tracer;

  private Tracing(SdkTracerProvider provider) {
    this.provider = provider;
    this.tracer = provider == null ? null : provider.get(INSTRUMENTATION);
  }

  /** No tracing: client traceparents pass through, nothing is recorded. */
  public static Tracing off() {
    return new Tracing(null);
  }

  /**
   * Tracing as configured: off without an endpoint, otherwise batches of spans to the collector.
   *
   * @param instanceId the {@code service.instance.id} (the ingress's cluster address)
   */
  public static Tracing fromSettings(TracingSettings settings, String instanceId) {
    if (!settings.enabled()) {
      return off();
    }
    OtlpHttpSpanExporterBuilder exporter =
        OtlpHttpSpanExporter.builder()
            .setEndpoint(settings.tracesUrl())
            .setTimeout(settings.exportTimeout())
            .setMeterProvider(MeterProvider::noop);
    settings.headers().forEach(exporter::addHeader);
    SpanProcessor batches =
        BatchSpanProcessor.builder(exporter.build())
            .setScheduleDelay(settings.scheduleDelay())
            .setExporterTimeout(settings.exportTimeout())
            .setMeterProvider(MeterProvider::noop)
            .build();
    return new Tracing(
        provider(settings.serviceName(), instanceId, settings.sampleRatio(), batches));
  }

  /** Every span exported to {@code exporter} as it ends (tests: the SDK's in-memory exporter). */
  public static Tracing exportingTo(SpanExporter exporter, String serviceName) {
    return new Tracing(
        provider(serviceName, serviceName, 1.0, SimpleSpanProcessor.create(exporter)));
  }

  private static SdkTracerProvider provider(
      String serviceName, String instanceId, double ratio, SpanProcessor processor) {
    Resource resource =
        Resource.getDefault()
            .merge(
                Resource.create(
                    Attributes.of(
                        AttributeKey.stringKey("service.name"),
                        serviceName,
                        AttributeKey.stringKey("service.instance.id"),
                        instanceId)));
    return SdkTracerProvider.builder()
        .setResource(resource)
        .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(ratio)))
        .addSpanProcessor(processor)
        .build();
  }

  /** True when spans are recorded. */
  public boolean enabled() {
    return tracer != null;
  }

  /**
   * Starts the trace of one request.
   *
   * @param name the request span's name, e.g. {@code POST /v1/chat/completions}
   * @param traceparent the client's {@code traceparent} header, or null
   * @param tracestate the client's {@code tracestate} header, or null
   */
  public RequestTrace start(String name, String traceparent, String tracestate) {
    if (tracer == null) {
      return RequestTrace.passThrough(traceparent, tracestate);
    }
    Map<String, String> carrier = new HashMap<>(2);
    if (traceparent != null) {
      carrier.put(RequestTrace.TRACEPARENT, traceparent);
    }
    if (tracestate != null) {
      carrier.put(RequestTrace.TRACESTATE, tracestate);
    }
    Context parent =
        W3CTraceContextPropagator.getInstance().extract(Context.root(), carrier, GETTER);
    Span span = tracer.spanBuilder(name).setParent(parent).setSpanKind(SpanKind.SERVER).startSpan();
    return RequestTrace.recording(tracer, span);
  }

  @Override
  public void close() {
    if (provider != null) {
      provider.shutdown().join(10, TimeUnit.SECONDS);
    }
  }
}
