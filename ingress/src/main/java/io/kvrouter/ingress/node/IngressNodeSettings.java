package io.kvrouter.ingress.node;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * The timeouts and intervals of an ingress node's actors and its consistency mode, read once at
 * start-up from {@code kvrouter.ingress.node} and {@code kvrouter.consistency} (each documented in
 * the ingress's {@code reference.conf}).
 *
 * @param consistency how the node's tracker stays consistent with the other ingresses'
 * @param askTimeout how long the HTTP edge waits for this node's tracker, its readiness or, in
 *     strict mode, a replica's gate
 * @param clusterAskTimeout how long the node's cluster actors wait for an answer: an agent's info,
 *     snapshot or replay, a peer's reservation replay, their own tracker's reservation mark
 * @param reservationMarkInterval how often the node publishes its next reservation seq and
 *     re-checks whether it has caught up with its peers
 * @param consistencyGatherTimeout how long {@code GET /admin/consistency} waits for each tracker
 * @param gaugeInterval how often the per-replica gauges are refreshed from the tracker
 */
public record IngressNodeSettings(
    Consistency consistency,
    Duration askTimeout,
    Duration clusterAskTimeout,
    Duration reservationMarkInterval,
    Duration consistencyGatherTimeout,
    Duration gaugeInterval) {

  /** How ingress trackers stay consistent ({@code kvrouter.consistency}). */
  public enum Consistency {
    /** Each tracker decides alone and broadcasts its reservations. */
    BROADCAST,
    /** Each decision is also admitted by the chosen replica's sharded gate. */
    STRICT;

    static Consistency parse(String value) {
      return switch (value) {
        case "broadcast" -> BROADCAST;
        case "strict" -> STRICT;
        default ->
            throw new IllegalArgumentException(
                "kvrouter.consistency must be broadcast or strict, was " + value);
      };
    }
  }

  /** Reads {@code kvrouter.ingress.node} and {@code kvrouter.consistency} from {@code config}. */
  public static IngressNodeSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.ingress.node");
    return new IngressNodeSettings(
        Consistency.parse(config.getString("kvrouter.consistency")),
        c.getDuration("ask-timeout"),
        c.getDuration("cluster-ask-timeout"),
        c.getDuration("reservation-mark-interval"),
        c.getDuration("consistency-gather-timeout"),
        c.getDuration("gauge-interval"));
  }
}
