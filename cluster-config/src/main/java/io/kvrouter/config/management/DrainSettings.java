package io.kvrouter.config.management;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * How a node leaves on SIGTERM ({@code kvrouter.node.drain}), read once at start-up.
 *
 * @param unreadyDelay how long the node keeps serving after it reported not-ready, so load
 *     balancers (a Kubernetes Service, Envoy) stop sending it new requests before it unbinds
 * @param gracePeriod how long requests and streams in flight may take to finish once the node
 *     stopped accepting; what is still running then is cut
 * @param deregisterDelay how long an agent waits after deregistering its replicas, so every tracker
 *     hears it before the agent leaves the cluster
 * @param flushDelay how long an ingress waits, once its last stream ended, before it closes its
 *     connections: a stream counts as ended when its last bytes leave the response entity, a moment
 *     before the HTTP layer has written them and the chunked encoding's end to the socket, and
 *     closing at once could cut them (one CI run: a client got all 40 tokens of a stream, then
 *     "closed" instead of its end)
 */
public record DrainSettings(
    Duration unreadyDelay, Duration gracePeriod, Duration deregisterDelay, Duration flushDelay) {

  /** Reads {@code kvrouter.node.drain} from {@code config}. */
  public static DrainSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.node.drain");
    return new DrainSettings(
        c.getDuration("unready-delay"),
        c.getDuration("grace-period"),
        c.getDuration("deregister-delay"),
        c.getDuration("flush-delay"));
  }
}
