package io.kvrouter.tracker;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.ledger.LoadLedger;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import io.kvrouter.tracker.sync.ReservationSync;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The decision and its bookkeeping: select-and-reserve (match, rank, pick, reserve, predict), the
 * lifecycle of own requests (passed on to the policy too), and peers' reservations entering the
 * ledger and the index. A policy whose {@link Visibility} excludes predicted blocks gets none on
 * replicas that publish KV events (its peer sees event-confirmed blocks only).
 *
 * <p>Cost of select-and-reserve: O(prompt blocks x holders per block) for the match, O(n log n)
 * over n candidates for ranking, O(uncached blocks) for predicting. Not thread-safe: one owner.
 */
final class Placement {

  private final TrackerConfig config;
  private final Membership replicas;
  private final PrefixIndex index;
  private final LoadLedger ledger;
  private final Policy policy;
  private final ReservationSync sync;
  private final Visibility visibility;
  private final MatchResult match = new MatchResult();

  Placement(
      TrackerConfig config,
      Membership replicas,
      PrefixIndex index,
      LoadLedger ledger,
      Policy policy,
      ReservationSync sync) {
    this.config = config;
    this.replicas = replicas;
    this.index = index;
    this.ledger = ledger;
    this.policy = policy;
    this.sync = sync;
    this.visibility = policy.visibility();
  }

  /** Matches, ranks, picks, reserves and predicts in one step. */
  Decision selectAndReserve(RouteRequest request, long nowMillis) {
    int[] candidates = replicas.candidates(request.model());
    if (candidates == null) {
      return Decision.none(request.requestId());
    }
    if (!request.excluded().isEmpty()) {
      candidates = without(candidates, request.excluded());
      if (candidates.length == 0) {
        return Decision.none(request.requestId());
      }
    }
    if (request.admission() && allBusy(candidates)) {
      return Decision.busy(request.requestId());
    }
    BlockKeys keys = replicas.blockKeys(request.model());
    long[] blockKeys = request.blockKeys();
    RouteQuery query =
        new RouteQuery(
            blockKeys, blockKeys.length, request.promptTokens(), keys.blockSize(), nowMillis);
    index.match(blockKeys, blockKeys.length, match);
    int[] ranked = policy.rank(query, candidates, match, ledger);
    int chosen = ranked[0];
    policy.onRouted(query, match, chosen);

    int held = match.gpuLeading(chosen);
    long anchor = held == 0 ? BlocksStored.ROOT : blockKeys[held - 1];
    long[] newKeys = Arrays.copyOfRange(blockKeys, held, blockKeys.length);
    int cached = cachedTokens(chosen, query);
    long lease = config.leaseMillis();
    Reserved reserved =
        sync.originate(
            seq ->
                new Reserved(
                    config.ingressId(),
                    seq,
                    request.requestId(),
                    replicas.ids().idOf(chosen),
                    request.promptTokens() - cached,
                    request.promptTokens(),
                    anchor,
                    newKeys,
                    lease,
                    nowMillis));
    ledger.reserve(
        config.ingressId(),
        request.requestId(),
        chosen,
        request.promptTokens(),
        reserved.prefillTokens(),
        nowMillis + lease);
    policy.onReserved(request.requestId(), query, chosen);
    if (predicts(chosen)) {
      index.predict(chosen, newKeys, 0, newKeys.length, nowMillis + ttl(chosen));
    }

    List<Decision.Candidate> out = new ArrayList<>(ranked.length);
    for (int r : ranked) {
      out.add(
          new Decision.Candidate(
              replicas.ids().idOf(r),
              match.matched(r),
              match.gpu(r),
              cachedTokens(r, query),
              ledger.inFlight(r) - (r == chosen ? 1 : 0)));
    }
    return new Decision(request.requestId(), replicas.ids().idOf(chosen), out, reserved);
  }

  /**
   * The first token of an own request arrived at {@code nowMillis} (negative: unknown); returns the
   * event to broadcast, or null.
   */
  PrefillCompleted prefillCompleted(String requestId, long nowMillis) {
    if (!ledger.prefillCompleted(config.ingressId(), requestId)) {
      return null;
    }
    policy.onPrefillCompleted(requestId, nowMillis);
    return sync.originate(seq -> new PrefillCompleted(config.ingressId(), seq, requestId));
  }

  /**
   * An own request ended at {@code nowMillis} (negative: unknown); returns the event to broadcast,
   * or null if it was unknown.
   */
  Released released(String requestId, long nowMillis) {
    if (ledger.release(config.ingressId(), requestId) == null) {
      return null;
    }
    policy.onReleased(requestId, nowMillis);
    return sync.originate(seq -> new Released(config.ingressId(), seq, requestId));
  }

  /**
   * A peer's reservation event: reservations enter the ledger and their new keys the index as
   * predicted entries; lifecycle events move or return load. Returns false when the event changed
   * nothing (duplicate, unknown request or replica).
   */
  boolean applyReservation(ReservationEvent event, long nowMillis) {
    if (event instanceof Reserved r) {
      int replica = replicas.ids().indexOf(r.replicaId());
      if (replica < 0) {
        return false;
      }
      if (!ledger.reserve(
          r.ingressId(),
          r.requestId(),
          replica,
          r.promptTokens(),
          r.prefillTokens(),
          nowMillis + r.leaseMillis())) {
        return false;
      }
      if (predicts(replica)) {
        index.predict(replica, r.newKeys(), 0, r.newKeys().length, nowMillis + ttl(replica));
      }
      return true;
    }
    if (event instanceof PrefillCompleted p) {
      return ledger.prefillCompleted(p.ingressId(), p.requestId());
    }
    Released released = (Released) event;
    return ledger.release(released.ingressId(), released.requestId()) != null;
  }

  private int[] without(int[] candidates, Set<String> excluded) {
    return Arrays.stream(candidates)
        .filter(c -> !excluded.contains(replicas.ids().idOf(c)))
        .toArray();
  }

  private boolean allBusy(int[] candidates) {
    for (int c : candidates) {
      if (!config.policyConfig().busy(ledger, c)) {
        return false;
      }
    }
    return true;
  }

  private int cachedTokens(int replica, RouteQuery query) {
    return (int) Math.min((long) match.matched(replica) * query.blockSize(), query.promptTokens());
  }

  /** How long a predicted entry lives: shorter for a replica that reports no KV events. */
  private long ttl(int replica) {
    return publishesEvents(replica) ? config.predictedTtlMillis() : config.approximateTtlMillis();
  }

  private boolean publishesEvents(int replica) {
    ReplicaInfo info = replicas.info(replica);
    return info == null || info.kvEvents();
  }

  /** Whether reservations on {@code replica} enter the index as predicted blocks. */
  private boolean predicts(int replica) {
    return visibility.predictedBlocks() || !publishesEvents(replica);
  }

  /** An own reservation's lease ran out: the policy forgets it as it would a release. */
  void ownLeaseEnded(String requestId, long nowMillis) {
    policy.onReleased(requestId, nowMillis);
  }
}
