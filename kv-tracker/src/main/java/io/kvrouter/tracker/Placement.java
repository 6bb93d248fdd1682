package io.kvrouter.tracker;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.ledger.BusyHeadroom;
import io.kvrouter.tracker.ledger.GateFloors;
import io.kvrouter.tracker.ledger.LoadLedger;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.ledger.Reservation;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import io.kvrouter.tracker.policy.WatchesPeers;
import io.kvrouter.tracker.steering.SteeringRule;
import io.kvrouter.tracker.sync.ReservationSync;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * The decision and its bookkeeping: select-and-reserve (match, rank, pick, reserve, predict), the
 * lifecycle of own requests (passed on to the policy too), and peers' reservations entering the
 * ledger and the index. A policy whose {@link Visibility} excludes predicted blocks gets none on
 * replicas that publish KV events (its peer sees event-confirmed blocks only).
 *
 * <p>A reservation is announced to peers when it is made, or, when the caller asks (strict mode,
 * where an admission gate may still turn it away), only once {@link #announce} says it stands: a
 * reservation given back before its announcement never reaches the peers, so they never count load
 * that was not placed.
 *
 * <p>Cost of select-and-reserve: O(prompt blocks x holders per block) for the match, O(n log n)
 * over n candidates for ranking, O(uncached blocks) for predicting. Not thread-safe: one owner.
 */
final class Placement {

  private final TrackerConfig config;
  private final Membership replicas;
  private final Matcher matcher;
  private final PrefixIndex index;
  private final LoadLedger ledger;
  private final Policy policy;
  private final ReservationSync sync;
  private final Coordination coordination;
  private final WatchesPeers peers;
  private final Visibility visibility;
  private static final long[] NO_KEYS = new long[0];

  private final MatchResult match = new MatchResult();

  /** Own reservations held back from the peers until announced, as events awaiting their seq. */
  private final Map<String, LongFunction<Reserved>> unannounced = new HashMap<>();

  Placement(
      TrackerConfig config,
      Membership replicas,
      Matcher matcher,
      PrefixIndex index,
      LoadLedger ledger,
      Policy policy,
      ReservationSync sync,
      Coordination coordination) {
    this.config = config;
    this.replicas = replicas;
    this.matcher = matcher;
    this.index = index;
    this.ledger = ledger;
    this.policy = policy;
    this.sync = sync;
    this.coordination = coordination;
    this.peers = policy instanceof WatchesPeers w ? w : null;
    this.visibility = policy.visibility();
  }

  /**
   * Matches, ranks, picks, reserves and predicts in one step.
   *
   * @param announce true: the decision carries the reservation to broadcast now; false: it carries
   *     none, and {@link #announce} makes it later (or a release drops it unseen)
   */
  Decision selectAndReserve(RouteRequest request, long nowMillis, boolean announce) {
    int[] candidates = matcher.candidates(request);
    if (candidates == null) {
      return Decision.none(request.requestId());
    }
    GateFloors floors =
        request.gateCounts().isEmpty()
            ? null
            : new GateFloors(
                ledger, request.gateCounts(), replicas.ids()::indexOf, request.promptTokens());
    LoadView load = floors == null ? ledger : floors;
    if (request.busyHeadroom() > 0) {
      load = new BusyHeadroom(load, request.busyHeadroom());
    }
    if (request.admission() && allBusy(candidates, load)) {
      return Decision.busy(request.requestId());
    }
    long[] blockKeys = request.blockKeys();
    RouteQuery query = matcher.matched(matcher.query(request, nowMillis, !announce), match);
    int[] policyRanked = policy.rank(query, candidates, match, load);
    SteeringRule.Steered steered = steer(request, query, policyRanked, load);
    if (steered.sloMiss()) {
      return Decision.sloMiss(request.requestId(), candidates(steered, query, -1, floors));
    }
    int[] ranked = steered.order();
    int chosen = ranked[0];
    policy.onRouted(query, match, chosen);

    int held = match.gpuLeading(chosen);
    long anchor = held == 0 ? BlocksStored.ROOT : blockKeys[held - 1];
    long[] newKeys = Arrays.copyOfRange(blockKeys, held, blockKeys.length);
    int cached = cachedTokens(chosen, query);
    long lease = config.leaseMillis();
    int prefill = request.promptTokens() - cached;
    String replicaId = replicas.ids().idOf(chosen);
    LongFunction<Reserved> stamped =
        seq ->
            new Reserved(
                config.ingressId(),
                seq,
                request.requestId(),
                replicaId,
                prefill,
                request.promptTokens(),
                anchor,
                newKeys,
                lease,
                nowMillis);
    Reserved reserved = null;
    if (announce) {
      reserved = sync.originate(stamped);
    } else {
      unannounced.put(request.requestId(), stamped);
    }
    ledger.reserve(
        config.ingressId(),
        request.requestId(),
        replicaId,
        chosen,
        request.promptTokens(),
        prefill,
        nowMillis + lease,
        predicts(chosen) ? newKeys : NO_KEYS);
    policy.onReserved(request.requestId(), query, chosen);
    if (predicts(chosen)) {
      index.predict(chosen, newKeys, 0, newKeys.length, nowMillis + ttl(chosen));
    }

    return new Decision(
        request.requestId(),
        replicas.ids().idOf(chosen),
        candidates(steered, query, chosen, floors),
        reserved);
  }

  /** The request's adapter, session affinity and TTFT target applied to the policy's ranking. */
  private SteeringRule.Steered steer(
      RouteRequest request, RouteQuery query, int[] ranked, LoadView load) {
    String bound = request.steering().boundReplica();
    java.util.Set<String> holders = request.steering().adapterHolders();
    return SteeringRule.apply(
        request.steering(),
        bound == null ? -1 : replicas.ids().indexOf(bound),
        r -> holders != null && holders.contains(replicas.ids().idOf(r)),
        ranked,
        query.promptTokens(),
        query.blockSize(),
        match,
        load,
        r -> config.busy().busy(load, r),
        request.admission());
  }

  /**
   * The candidates in steered order; {@code chosen}'s own new reservation is not counted, and a
   * replica counts at least what its gate reported ({@code floors}, null for none).
   */
  private List<Decision.Candidate> candidates(
      SteeringRule.Steered steered, RouteQuery query, int chosen, GateFloors floors) {
    int[] order = steered.order();
    List<Decision.Candidate> out = new ArrayList<>(order.length);
    for (int i = 0; i < order.length; i++) {
      int r = order[i];
      out.add(
          new Decision.Candidate(
              replicas.ids().idOf(r),
              match.matched(r),
              match.gpu(r),
              cachedTokens(r, query),
              Math.max(
                  ledger.inFlight(r) - (r == chosen ? 1 : 0), floors == null ? 0 : floors.floor(r)),
              steered.predicted()[i],
              steered.floor()[i],
              Decision.hitClass(match.fullAttentionMatched(r), match.matched(r))));
    }
    return out;
  }

  /**
   * The first token of an own request arrived at {@code nowMillis} (negative: unknown); returns the
   * event to broadcast, or null.
   */
  PrefillCompleted prefillCompleted(String requestId, long nowMillis) {
    if (!ledger.prefillCompleted(config.ingressId(), requestId)) {
      return null;
    }
    awaitConfirmation(config.ingressId(), requestId, nowMillis);
    policy.onPrefillCompleted(requestId, nowMillis);
    if (unannounced.containsKey(requestId)) {
      return null; // the peers do not know it
    }
    return sync.originate(seq -> new PrefillCompleted(config.ingressId(), seq, requestId));
  }

  /**
   * The request's prefill is over, so its engine has stored its blocks and published their events
   * by now: the reservation's predicted entries live only {@link
   * TrackerConfig#predictedConfirmMillis} longer (on a replica that publishes KV events), and what
   * the engine confirmed stays as its own blocks. A prediction the engine never confirmed (it
   * evicted the blocks, or its keys do not line up with the router's) stops predicting, and the
   * index accuracy check then sees the index as it is. Without a clock ({@code nowMillis} negative)
   * the entries keep their TTL.
   */
  private void awaitConfirmation(String origin, String requestId, long nowMillis) {
    Reservation r = ledger.reservation(origin, requestId);
    if (nowMillis < 0 || r == null || !r.attached() || r.predictedKeys().length == 0) {
      return;
    }
    ReplicaInfo info = replicas.info(r.replica());
    if (info != null && info.kvEvents()) {
      index.retirePredicted(
          r.replica(),
          r.predictedKeys(),
          0,
          r.predictedKeys().length,
          nowMillis + config.predictedConfirmMillis());
    }
  }

  /**
   * An own request ended at {@code nowMillis} (negative: unknown); returns the event to broadcast,
   * or null if it was unknown.
   */
  Released released(String requestId, long nowMillis) {
    Reservation r = ledger.release(config.ingressId(), requestId);
    if (r == null) {
      unannounced.remove(requestId);
      return null;
    }
    policy.onReleased(requestId, nowMillis);
    if (unannounced.remove(requestId) != null) {
      // Given back before the peers heard of it: the request never went there.
      forgetPredicted(r, nowMillis);
      return null;
    }
    return sync.originate(seq -> new Released(config.ingressId(), seq, requestId));
  }

  /**
   * A reservation given back unannounced (strict mode: its gate turned it away) never reached its
   * replica, so the blocks it predicted there end now: left to their TTL, they would draw the
   * request's retry back to the replica that turned it away, as a cache hit outweighing every
   * replica with fewer requests. Without a clock ({@code nowMillis} negative) they keep their TTL.
   */
  private void forgetPredicted(Reservation r, long nowMillis) {
    if (nowMillis < 0 || !r.attached() || r.predictedKeys().length == 0) {
      return;
    }
    index.retirePredicted(r.replica(), r.predictedKeys(), 0, r.predictedKeys().length, nowMillis);
    index.expirePredicted(nowMillis);
  }

  /**
   * A peer's reservation event: reservations enter the ledger and their new keys the index as
   * predicted entries; lifecycle events move or return load. Returns false when the event changed
   * nothing (duplicate or unknown request).
   *
   * <p>What an event does to the ledger depends on the event and the ledger alone, never on what
   * this tracker happens to see of the membership or the clock, so an origin's digest is a function
   * of the prefix of its stream applied: a reservation on a replica not known here is held detached
   * (see {@link LoadLedger}), and a peer's reservation has no lease here. Its origin ends it, with
   * a {@code Released} in its stream when the request ends or its lease there runs out, or by
   * leaving the cluster ({@link KvTrackerCore#dropOrigin}).
   */
  boolean applyReservation(ReservationEvent event, long nowMillis) {
    if (event instanceof Reserved r) {
      int replica = replicas.ids().indexOf(r.replicaId());
      if (!ledger.reserve(
          r.ingressId(),
          r.requestId(),
          r.replicaId(),
          replica < 0 ? Reservation.DETACHED : replica,
          r.promptTokens(),
          r.prefillTokens(),
          LoadLedger.NO_LEASE,
          replica >= 0 && predicts(replica) ? r.newKeys() : NO_KEYS)) {
        return false;
      }
      if (replica >= 0 && predicts(replica)) {
        index.predict(replica, r.newKeys(), 0, r.newKeys().length, nowMillis + ttl(replica));
      }
      if (!r.ingressId().equals(config.ingressId())) {
        if (peers != null) {
          peers.onPeerReserved(
              r.ingressId(),
              replica,
              r.prefillTokens(),
              r.promptTokens(),
              r.issuedMillis(),
              nowMillis);
        }
        coordination.peerDecided(r.ingressId(), r.promptTokens(), r.issuedMillis(), nowMillis);
      }
      return true;
    }
    if (event instanceof PrefillCompleted p) {
      if (!ledger.prefillCompleted(p.ingressId(), p.requestId())) {
        return false;
      }
      awaitConfirmation(p.ingressId(), p.requestId(), nowMillis);
      return true;
    }
    Released released = (Released) event;
    return ledger.release(released.ingressId(), released.requestId()) != null;
  }

  private boolean allBusy(int[] candidates, LoadView load) {
    for (int c : candidates) {
      if (!config.busy().busy(load, c)) {
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
    unannounced.remove(requestId);
    policy.onReleased(requestId, nowMillis);
  }

  /**
   * An own reservation held back by {@code selectAndReserve(..., false)} stands: returns its event
   * with the next seq, to broadcast, or null when there is none (announced, released or expired).
   */
  Reserved announce(String requestId) {
    LongFunction<Reserved> stamped = unannounced.remove(requestId);
    return stamped == null ? null : sync.originate(stamped);
  }
}
