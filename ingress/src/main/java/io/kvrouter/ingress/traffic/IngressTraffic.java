package io.kvrouter.ingress.traffic;

import com.typesafe.config.Config;
import io.kvrouter.ingress.tracing.Tracing;
import java.util.function.Consumer;

/**
 * Traffic management as the HTTP front of one ingress uses it: its settings, the request path's
 * checks ({@link TrafficGate}), tracing, meters, the session bindings (for {@code
 * /admin/sessions}), and what the other ingresses' router queues wait with and run.
 *
 * @param peers the other ingresses' queue heads
 * @param heads told what this ingress's router queue holds per model, whenever it changes
 */
public record IngressTraffic(
    TrafficSettings settings,
    TrafficGate gate,
    Tracing tracing,
    TrafficMetrics metrics,
    SessionStore sessions,
    PeerQueues peers,
    Consumer<QueueState> heads) {

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
        state -> {});
  }

  /** The same with other tracing. */
  public IngressTraffic withTracing(Tracing other) {
    return new IngressTraffic(settings, gate, other, metrics, sessions, peers, heads);
  }
}
