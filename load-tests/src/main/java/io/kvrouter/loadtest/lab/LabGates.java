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
 * {@link #admit} when the attempt reaches the gate and {@link #leave} when its request ends. The
 * retry rules are the ingress's {@code TrackerRouter}'s ({@code RouteAttempt}): a replica whose
 * gate turned the request away stays a candidate, counted with the requests its gate reported
 * ({@link io.kvrouter.tracker.RouteRequest#gateCounts}), and the gate admits regardless once the
 * request was turned away {@value #ROUNDS} times per candidate.
 *
 * <p>Cost: O(1) per admit and leave plus the ledger's lease sweep. Not thread-safe.
 */
final class LabGates {

  /** Turn-aways per candidate a request may meet before its admission is forced. */
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
   * @param excluded replica ids left out of the next decisions (admitted on a replica that died
   *     meanwhile: the ingress, failing to reach it, tries elsewhere)
   * @param gateCounts per replica id whose gate turned the request away, the requests it held
   * @param turnedAway how many times a gate turned the request away
   */
  record Attempt(
      int index,
      String requestId,
      int router,
      int replica,
      int expected,
      boolean first,
      Set<String> excluded,
      Map<String, Integer> gateCounts,
      int turnedAway) {

    /** The gate counts for the next decision: {@code replicaId}'s gate held {@code held}. */
    Map<String, Integer> gateCountsNext(String replicaId, int held) {
      Map<String, Integer> counts = new HashMap<>(gateCounts);
      counts.merge(replicaId, held, Math::max);
      return Map.copyOf(counts);
    }

    /** The exclusions for the next decision: {@code replicaId} too. */
    Set<String> excludedNext(String replicaId) {
      Set<String> more = new HashSet<>(excluded);
      more.add(replicaId);
      return Set.copyOf(more);
    }
  }

  private final Map<Integer, GateLedger> gates = new HashMap<>();

  /**
   * The attempt reached its replica's gate: {@code -1} when admitted, else the requests the gate
   * holds (what its refusal reports).
   */
  int admit(Attempt a) {
    GateLedger gate = gates.computeIfAbsent(a.replica(), r -> new GateLedger());
    return gate.admit(a.requestId(), a.expected(), LEASE_MILLIS, 0) ? -1 : gate.inFlight();
  }

  /** The request admitted on {@code replica} ended. */
  void leave(int replica, String requestId) {
    GateLedger g = gates.get(replica);
    if (g != null) {
      g.leave(requestId);
    }
  }

  /** Whether an attempt turned away {@code turnedAway} times must be admitted regardless. */
  static boolean forced(int turnedAway, int candidates) {
    return turnedAway >= ROUNDS * Math.max(1, candidates);
  }
}
