package io.kvrouter.ingress.strict;

import io.kvrouter.protocol.GateCommand;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/** The sharded admission gate of one replica (strict mode): thin over {@link GateLedger}. */
public final class ReplicaGate {

  /** One entity per replica target id, on ingress nodes. */
  public static final EntityTypeKey<GateCommand> TYPE_KEY =
      EntityTypeKey.create(GateCommand.class, "kvrouter-replica-gate");

  private ReplicaGate() {}

  public static Behavior<GateCommand> create() {
    GateLedger ledger = new GateLedger();
    return Behaviors.receive(GateCommand.class)
        .onMessage(
            GateCommand.Admit.class,
            m -> {
              boolean admitted =
                  ledger.admit(
                      m.requestId(),
                      m.expectedInFlight(),
                      m.leaseMillis(),
                      System.currentTimeMillis());
              m.replyTo().tell(new GateCommand.Admission(admitted, ledger.inFlight()));
              return Behaviors.same();
            })
        .onMessage(
            GateCommand.Leave.class,
            m -> {
              ledger.leave(m.requestId());
              return Behaviors.same();
            })
        .build();
  }
}
