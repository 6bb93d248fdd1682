package io.kvrouter.agent;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * What an agent node runs.
 *
 * @param replicas the replicas it serves
 * @param heartbeatInterval how often it scrapes /metrics and checks /health
 * @param deadAfterFailures consecutive failed health checks before a replica is deregistered
 * @param ringCapacity stamped batches kept per replica for replay
 * @param keyFunctions the router key function per model (the lead swaps in the tracker's)
 */
public record AgentSettings(
    List<ReplicaSpec> replicas,
    Duration heartbeatInterval,
    int deadAfterFailures,
    int ringCapacity,
    Function<String, RouterKeyFunction> keyFunctions) {

  public AgentSettings {
    replicas = List.copyOf(replicas);
  }

  /** One-second heartbeats, dead after 3 failures, 10,000 batches of replay, XXH3 keys. */
  public static AgentSettings of(List<ReplicaSpec> replicas) {
    return new AgentSettings(replicas, Duration.ofSeconds(1), 3, 10_000, TrackerRouterKeys::new);
  }

  public AgentSettings withHeartbeat(Duration interval, int deadAfter) {
    return new AgentSettings(replicas, interval, deadAfter, ringCapacity, keyFunctions);
  }

  public AgentSettings withKeyFunctions(Function<String, RouterKeyFunction> f) {
    return new AgentSettings(replicas, heartbeatInterval, deadAfterFailures, ringCapacity, f);
  }
}
