package io.kvrouter.ingress.tracing;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * OpenTelemetry tracing of the ingress, read once from {@code kvrouter.ingress.tracing}.
 *
 * @param otlpEndpoint base URL of an OTLP/HTTP collector (e.g. {@code http://otel-collector:4318});
 *     spans go to its {@code /v1/traces}. Empty: tracing is off and no exporter exists at all
 * @param headers extra HTTP headers on every export (e.g. a collector's authorization)
 * @param serviceName the {@code service.name} resource attribute
 * @param sampleRatio share of new traces recorded (a client's sampled flag is followed)
 * @param exportTimeout how long one export may take
 * @param scheduleDelay how long spans wait to be exported in a batch
 */
public record TracingSettings(
    String otlpEndpoint,
    Map<String, String> headers,
    String serviceName,
    double sampleRatio,
    Duration exportTimeout,
    Duration scheduleDelay) {

  public TracingSettings {
    headers = Map.copyOf(headers);
    if (!(sampleRatio >= 0 && sampleRatio <= 1)) {
      throw new IllegalArgumentException("sample-ratio must be in [0, 1], was " + sampleRatio);
    }
  }

  /** Reads {@code kvrouter.ingress.tracing}. */
  public static TracingSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.ingress.tracing");
    Map<String, String> headers = new TreeMap<>();
    Config h = c.getConfig("otlp-headers");
    h.root().keySet().forEach(k -> headers.put(k, h.getString("\"" + k + "\"")));
    return new TracingSettings(
        c.getString("otlp-endpoint").trim(),
        headers,
        c.getString("service-name"),
        c.getDouble("sample-ratio"),
        c.getDuration("export-timeout"),
        c.getDuration("schedule-delay"));
  }

  /** True when spans are exported somewhere. */
  public boolean enabled() {
    return !otlpEndpoint.isEmpty();
  }

  /** The collector's trace URL: the endpoint with {@code /v1/traces}, as OTLP/HTTP defines it. */
  public String tracesUrl() {
    String base =
        otlpEndpoint.endsWith("/")
            ? otlpEndpoint.substring(0, otlpEndpoint.length() - 1)
            : otlpEndpoint;
    return base.endsWith("/v1/traces") ? base : base + "/v1/traces";
  }
}
