package io.kvrouter.loadtest.lab;

import io.kvrouter.ingress.strict.GateLedger;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Strict mode in the lab: one admission gate per replica, the ingress's own {@link GateLedger}
 * (what a {@code ReplicaGate} entity runs), reached one gate hop after the decision and answering
 * one hop later. The lab's event loop carries each attempt as a {@link Attempt} value and calls
 * {@link #admit} when the attempt reaches the gate and {@link #leave} when its request ends; the
 * retry rules (another replica after a refusal, another round over all of them when every candidate
 * refused, the last candidate forced after {@value #ROUNDS} rounds) are those the ingress's {@code
 * TrackerRouter} had until 2 Dec 2026. The ingress now keeps a refusing replica as a candidate,
 * counted with the requests its gate reported ({@code RouteAttempt#gateCounts}), and removes a
 * refused reservation's predicted blocks at once; the lab does not model that yet, so its strict
 * figures are those of the former rule.
 *
 * <p>Cost: O(1) per admit and leave plus the ledger's lease sweep. Not thread-safe.
 */
final class LabGates {

  /** Rounds over every candidate a request may be turned away in before its last is forced. */
  static final int ROUNDS = 3;

  /** Leases of the lab's gates: long enough never to end before the request does. */
  private static final long LEASE_MILLIS = Long.MAX_VALUE / 4;

  /**
   * One attempt of a request to pass a gate.
   *
   * @param index the request's index in the workload
   * @param requestId the id of this attempt's reservation
   * @param router the router that decided
   * @param replica the replica it chose
   * @param expected the other requests the router saw there when it decided
   * @param first whether this is the request's first placement (not a retry after a kill)
   * @param last whether the replica was the router's last candidate
   * @param rejected replicas that turned it away in this round
   * @param round rounds over every candidate so far
   */
  record Attempt(
      int index,
      String requestId,
      int router,
      int replica,
      int expected,
      boolean first,
      boolean last,
      Set<String> rejected,
      int round) {

    /**
     * The replicas to leave out when the router decides again after this attempt's gate turned it
     * away: {@code replicaId} too, or none when it was the last candidate (another round starts).
     */
    Set<String> rejectedNext(String replicaId) {
      if (last) {
        return Set.of();
      }
      Set<String> more = new HashSet<>(rejected);
      more.add(replicaId);
      return more;
    }

    /** The round of the next decision: one more when this was the last candidate. */
    int roundNext() {
      return last ? round + 1 : round;
    }
  }

  private final Map<Integer, GateLedger> gates = new HashMap<>();

  /** The attempt reached its replica's gate: admitted or not. */
  boolean admit(Attempt a) {
    return gates
        .computeIfAbsent(a.replica(), r -> new GateLedger())
        .admit(a.requestId(), a.expected(), LEASE_MILLIS, 0);
  }

  /** The request admitted on {@code replica} ended. */
  void leave(int replica, String requestId) {
    GateLedger g = gates.get(replica);
    if (g != null) {
      g.leave(requestId);
    }
  }

  /** Whether the attempt, having been turned away, must be forced on its next candidate. */
  static boolean forceNext(boolean lastCandidate, int round) {
    return lastCandidate && round >= ROUNDS;
  }
}
