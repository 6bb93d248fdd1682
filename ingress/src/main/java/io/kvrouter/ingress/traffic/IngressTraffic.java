package io.kvrouter.ingress.traffic;

import com.typesafe.config.Config;
import io.kvrouter.ingress.tracing.Tracing;
import java.util.function.BiConsumer;

/**
 * Traffic management as the HTTP front of one ingress uses it: its settings, the request path's
 * checks ({@link TrafficGate}), tracing, meters, the session bindings (for {@code
 * /admin/sessions}), and what the other ingresses' router queues wait with.
 *
 * @param peers the other ingresses' queue heads
 * @param heads told this ingress's queue heads (model, most pressing priority or null)
 */
public record IngressTraffic(
    TrafficSettings settings,
    TrafficGate gate,
    Tracing tracing,
    TrafficMetrics metrics,
    SessionStore sessions,
    PeerQueues peers,
    BiConsumer<String, Integer> heads) {

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
        SessionStore.NONE,
        PeerQueues.NONE,
        (model, priority) -> {});
  }

  /** The same with other tracing. */
  public IngressTraffic withTracing(Tracing other) {
    return new IngressTraffic(settings, gate, other, metrics, sessions, peers, heads);
  }
}
