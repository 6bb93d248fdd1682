package io.kvrouter.ingress.traffic;

import com.typesafe.config.Config;
import io.kvrouter.ingress.tracing.Tracing;

/**
 * Traffic management as the HTTP front of one ingress uses it: its settings, the request path's
 * checks ({@link TrafficGate}), tracing, meters and the session bindings (for {@code
 * /admin/sessions}).
 */
public record IngressTraffic(
    TrafficSettings settings,
    TrafficGate gate,
    Tracing tracing,
    TrafficMetrics metrics,
    SessionStore sessions) {

  /**
   * Traffic management of a front without a cluster (tests, tools): tenants as configured but no
   * limits counted, no session bindings, no tracing.
   */
  public static IngressTraffic standalone(Config config, TrafficMetrics metrics) {
    TrafficSettings settings = TrafficSettings.fromConfig(config);
    return new IngressTraffic(
        settings,
        new TrafficGate(
            settings,
            TenantRegistry.fromSettings(settings.tenants()),
            UsageLimiter.UNLIMITED,
            metrics),
        Tracing.off(),
        metrics,
        SessionStore.NONE);
  }
}
