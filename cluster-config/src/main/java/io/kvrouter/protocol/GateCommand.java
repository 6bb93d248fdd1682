package io.kvrouter.protocol;

/**
 * Messages of a replica's admission gate in strict mode ({@code kvrouter.consistency = strict}):
 * one Cluster Sharding entity per replica serialises reservations from every ingress.
 */
public sealed interface GateCommand extends KryoWire permits GateCommand.Admit, GateCommand.Leave {

  /**
   * Admit {@code requestId} if the replica holds at most {@code expectedInFlight} other requests,
   * that is, if no other ingress slipped a request in that the asking tracker has not seen.
   *
   * @param leaseMillis how long the admission holds if never left
   */
  record Admit(
      String requestId,
      int expectedInFlight,
      long leaseMillis,
      org.apache.pekko.actor.typed.ActorRef<Admission> replyTo)
      implements GateCommand {}

  /** The request ended. */
  record Leave(String requestId) implements GateCommand {}

  /** The gate's answer: admitted or not, and how many requests the replica holds now. */
  record Admission(boolean admitted, int inFlight) implements KryoWire {}
}
