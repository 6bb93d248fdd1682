package io.kvrouter.ingress.strict;

import io.kvrouter.protocol.GateCommand;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;

/**
 * The ingress side of strict mode: starts the replica gates' sharding on this node and asks the
 * gate of a replica to admit a request (one extra hop per decision) or to let it go.
 */
public final class StrictGate implements AdmissionGate {

  private final ClusterSharding sharding;
  private final Duration timeout;
  private final long leaseMillis;

  public StrictGate(ActorSystem<?> system, Duration timeout, long leaseMillis) {
    this.sharding = ClusterSharding.get(system);
    this.timeout = timeout;
    this.leaseMillis = leaseMillis;
    sharding.init(Entity.of(ReplicaGate.TYPE_KEY, ctx -> ReplicaGate.create()).withRole("ingress"));
  }

  @Override
  public CompletionStage<GateCommand.Admission> admit(
      String replica, String requestId, int expectedInFlight) {
    return sharding
        .entityRefFor(ReplicaGate.TYPE_KEY, replica)
        .ask(
            replyTo -> new GateCommand.Admit(requestId, expectedInFlight, leaseMillis, replyTo),
            timeout);
  }

  @Override
  public void leave(String replica, String requestId) {
    sharding.entityRefFor(ReplicaGate.TYPE_KEY, replica).tell(new GateCommand.Leave(requestId));
  }
}
