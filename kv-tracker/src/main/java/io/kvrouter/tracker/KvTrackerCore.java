package io.kvrouter.tracker;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationMark;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.TrackerView;
import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.index.ReplicaIds;
import io.kvrouter.tracker.keys.BlockKeys;
import io.kvrouter.tracker.ledger.LoadLedger;
import io.kvrouter.tracker.ledger.Reservation;
import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.PolicyFeedback;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.sync.BatchReorderBuffer;
import io.kvrouter.tracker.sync.OwnReservationLog;
import io.kvrouter.tracker.sync.PeerSequencer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The tracker: one prefix index, one load ledger and one policy over the replicas it knows, behind
 * the operations the {@code KvTracker} actor (or the policy lab) calls. Plain Java; time is passed
 * in, so it runs in virtual time too.
 *
 * <p>Contract, per operation:
 *
 * <ul>
 *   <li>{@link #replicaUp}/{@link #replicaDown}: membership. Down purges the replica from the
 *       index, the ledger, the policy and the candidate set at once.
 *   <li>{@link #apply(KvEventBatch)}: applies a batch if it is the next one of its replica ({@link
 *       EventSequencer}); returns the verdict so the caller can request a replay on a gap.
 *   <li>{@link #selectAndReserve}: match, rank, pick, reserve, predict; returns the decision with
 *       the {@link Reserved} event to broadcast.
 *   <li>{@link #prefillCompleted}/{@link #released}: lifecycle of own requests; return the event to
 *       broadcast, or {@code null} for an unknown request.
 *   <li>{@link #applyReservation}: a peer's reservation event (own echoes are ignored as
 *       duplicates).
 *   <li>{@link #expire}: ends leases and predicted entries due at {@code nowMillis}.
 * </ul>
 *
 * <p>Cost of select-and-reserve: O(prompt blocks x holders per block) for the match, O(n log n)
 * over n candidates for ranking, O(uncached blocks) for predicting. Not thread-safe: one owner.
 */
public final class KvTrackerCore {

  private final TrackerConfig config;
  private final ReplicaIds ids = new ReplicaIds();
  private final PrefixIndex index;
  private final LoadLedger ledger;
  private final Policy policy;

  /** The policy, when it learns from outcomes; else null. */
  private final PolicyFeedback feedback;

  private final EventSequencer sequencer = new EventSequencer();
  private final MatchResult match = new MatchResult();
  private final Map<String, ReplicaInfo> infos = new HashMap<>();
  private final Map<String, int[]> candidatesByModel = new HashMap<>();
  private final Map<String, BlockKeys> keysByModel = new HashMap<>();
  private long nextSeq;
  private final BatchReorderBuffer early = new BatchReorderBuffer(64);
  private final OwnReservationLog ownLog;
  private final PeerSequencer peers = new PeerSequencer(256);

  public KvTrackerCore(TrackerConfig config) {
    this.ownLog = new OwnReservationLog(config.ingressId(), 1 << 16);
    this.config = config;
    this.index = new PrefixIndex(config.expectedBlocks());
    this.ledger = new LoadLedger(ids::idOf);
    // Seeded per ingress: routers acting on the same state must not draw the same tie-breaks.
    this.policy =
        Policies.create(
            config.policy(),
            config.policyConfig(),
            new SplittableRandom(
                config.seed() ^ (config.ingressId().hashCode() * 0x9E3779B97F4A7C15L)));
    this.feedback = policy instanceof PolicyFeedback f ? f : null;
    if (feedback != null) {
      feedback.bind(config.ingressId());
    }
  }

  public TrackerConfig config() {
    return config;
  }

  // ---------------------------------------------------------------- membership

  /**
   * A replica joined (or re-announced itself; then nothing changes but its info). All replicas of a
   * model must share one block size: the first replica of a model fixes the {@link
   * #blockKeys(String)} function, and blocks reported by replicas that disagree would simply never
   * match.
   */
  public void replicaUp(ReplicaInfo info) {
    String id = info.targetId();
    ReplicaInfo before = infos.put(id, info);
    ids.intern(id);
    if (before != null && !before.model().equals(info.model())) {
      rebuildCandidates(before.model());
    }
    keysByModel.computeIfAbsent(info.model(), m -> BlockKeys.of(m, info.blockSize()));
    rebuildCandidates(info.model());
  }

  /** A replica left: forget everything about it. */
  public void replicaDown(String targetId) {
    ReplicaInfo info = infos.remove(targetId);
    int replica = ids.indexOf(targetId);
    if (replica >= 0) {
      index.dropReplica(replica);
      ledger.dropReplica(replica);
      policy.onReplicaRemoved(replica);
      ids.release(targetId);
    }
    sequencer.forget(targetId);
    if (info != null) {
      rebuildCandidates(info.model());
    }
  }

  private void rebuildCandidates(String model) {
    int[] c =
        infos.values().stream()
            .filter(i -> i.model().equals(model))
            .mapToInt(i -> ids.indexOf(i.targetId()))
            .sorted()
            .toArray();
    if (c.length == 0) {
      candidatesByModel.remove(model);
    } else {
      candidatesByModel.put(model, c);
    }
  }

  /** The block-key function of a model its replicas announced, or {@code null}. */
  public BlockKeys blockKeys(String model) {
    return keysByModel.get(model);
  }

  /** Known replicas' target ids. */
  public List<String> replicas() {
    return List.copyOf(infos.keySet());
  }

  // ---------------------------------------------------------------- event plane

  /**
   * Applies a batch if it is its replica's next one. Batches of unknown replicas are judged (so
   * watermarks advance) and applied: events may precede the membership listing.
   */
  public EventSequencer.Verdict apply(KvEventBatch batch) {
    EventSequencer.Verdict verdict = applyOne(batch);
    if (verdict.outcome() == EventSequencer.Outcome.GAP && verdict.epoch() == batch.epoch()) {
      early.hold(batch); // maybe only reordered: applied as soon as the missing ones come
    } else if (applied(verdict)) {
      if (verdict.outcome() == EventSequencer.Outcome.NEW_EPOCH) {
        early.clear(batch.replicaId());
      }
      drainEarly(batch.replicaId(), verdict.epoch(), verdict.expectedSeq());
    }
    return verdict;
  }

  private static boolean applied(EventSequencer.Verdict v) {
    return v.outcome() == EventSequencer.Outcome.APPLY
        || v.outcome() == EventSequencer.Outcome.NEW_EPOCH;
  }

  private void drainEarly(String replicaId, long epoch, long nextSeq) {
    KvEventBatch next;
    while ((next = early.take(replicaId, epoch, nextSeq)) != null) {
      nextSeq = applyOne(next).expectedSeq();
    }
  }

  private EventSequencer.Verdict applyOne(KvEventBatch batch) {
    EventSequencer.Verdict verdict = sequencer.admit(batch.replicaId(), batch.epoch(), batch.seq());
    int replica = ids.intern(batch.replicaId());
    if (verdict.clearFirst()) {
      index.clearReplica(replica);
    }
    if (applied(verdict)) {
      for (KvEvent event : batch.events()) {
        applyEvent(replica, event);
      }
    }
    return verdict;
  }

  /**
   * An agent's heartbeat says its stream of the replica stands at {@code (epoch, lastSeq)}: returns
   * the gap to repair when this tracker is behind it (lost last batches, which no later batch would
   * reveal), or null.
   */
  public io.kvrouter.tracker.actor.GapDetected behind(String replicaId, long epoch, long lastSeq) {
    if (lastSeq < 0) {
      return null;
    }
    EventSequencer.Watermark w = sequencer.watermark(replicaId);
    if (w == null || epoch > w.epoch()) {
      return new io.kvrouter.tracker.actor.GapDetected(replicaId, epoch, 0);
    }
    if (epoch == w.epoch() && lastSeq > w.seq()) {
      return new io.kvrouter.tracker.actor.GapDetected(replicaId, epoch, w.seq() + 1);
    }
    return null;
  }

  private void applyEvent(int replica, KvEvent event) {
    if (event instanceof BlocksStored s) {
      index.store(replica, s);
    } else if (event instanceof BlocksRemoved r) {
      index.remove(replica, r);
    } else if (event instanceof ReplicaCleared) {
      index.clearReplica(replica);
    }
  }

  /**
   * Replaces the replica's state by an agent's snapshot (the answer to a replay the ring buffer
   * could no longer serve, or a late joiner's bootstrap) and continues after its last seq.
   */
  public void installSnapshot(ReplicaSnapshot snapshot) {
    int replica = ids.intern(snapshot.replicaId());
    index.clearReplica(replica);
    for (KvEvent event : snapshot.events()) {
      applyEvent(replica, event);
    }
    sequencer.reset(snapshot.replicaId(), snapshot.epoch(), snapshot.lastSeq());
    drainEarly(snapshot.replicaId(), snapshot.epoch(), snapshot.lastSeq() + 1);
  }

  /** After installing a snapshot: the replica's state now stands at {@code (epoch, seq)}. */
  public void resetWatermark(String replicaId, long epoch, long seq) {
    sequencer.reset(replicaId, epoch, seq);
  }

  /** Records an engine load report. */
  public void loadReported(ReplicaLoad load) {
    int replica = ids.indexOf(load.replicaId());
    if (replica >= 0) {
      ledger.reportLoad(replica, load.running(), load.waiting(), load.kvUsage());
    }
  }

  // ---------------------------------------------------------------- decisions

  /** Matches, ranks, picks, reserves and predicts in one step. */
  // EXPERIMENT
  public boolean EXPERIMENT_DEFER;
  public long lastDefer;

  public Decision selectAndReserve(RouteRequest request, long nowMillis) {
    int[] candidates = candidatesByModel.get(request.model());
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
    BlockKeys keys = keysByModel.get(request.model());
    long[] blockKeys = request.blockKeys();
    RouteQuery query =
        new RouteQuery(
            blockKeys, blockKeys.length, request.promptTokens(), keys.blockSize(), nowMillis);
    index.match(blockKeys, blockKeys.length, match);
    if (feedback != null) {
      feedback.experimentDeferred(!EXPERIMENT_DEFER);
    }
    int[] ranked = policy.rank(query, candidates, match, ledger);
    int chosen = ranked[0];
    if (EXPERIMENT_DEFER && feedback != null) {
      long defer = feedback.deferMillis(query, chosen, nowMillis);
      if (defer > 0) {
        lastDefer = defer;
        return null;
      }
    }
    policy.onRouted(query, match, chosen);
    if (feedback != null) {
      feedback.placed(request.requestId(), query, chosen);
    }

    int held = match.gpuLeading(chosen);
    long anchor = held == 0 ? BlocksStored.ROOT : blockKeys[held - 1];
    long[] newKeys = Arrays.copyOfRange(blockKeys, held, blockKeys.length);
    int cached = cachedTokens(chosen, query);
    long lease = config.leaseMillis();
    Reserved reserved =
        new Reserved(
            config.ingressId(),
            nextSeq++,
            request.requestId(),
            ids.idOf(chosen),
            request.promptTokens() - cached,
            request.promptTokens(),
            anchor,
            newKeys,
            lease,
            nowMillis);
    ledger.reserve(
        config.ingressId(),
        request.requestId(),
        chosen,
        request.promptTokens(),
        reserved.prefillTokens(),
        nowMillis + lease);
    ownLog.record(reserved);
    index.predict(chosen, newKeys, 0, newKeys.length, nowMillis + ttl(chosen));

    List<Decision.Candidate> out = new ArrayList<>(ranked.length);
    for (int r : ranked) {
      out.add(
          new Decision.Candidate(
              ids.idOf(r),
              match.matched(r),
              match.gpu(r),
              cachedTokens(r, query),
              ledger.inFlight(r) - (r == chosen ? 1 : 0)));
    }
    return new Decision(request.requestId(), ids.idOf(chosen), out, reserved);
  }

  private int[] without(int[] candidates, java.util.Set<String> excluded) {
    return Arrays.stream(candidates).filter(c -> !excluded.contains(ids.idOf(c))).toArray();
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

  private long ttl(int replica) {
    ReplicaInfo info = infos.get(ids.idOf(replica));
    return info != null && !info.kvEvents()
        ? config.approximateTtlMillis()
        : config.predictedTtlMillis();
  }

  /** The first token of an own request arrived; returns the event to broadcast, or null. */
  public PrefillCompleted prefillCompleted(String requestId) {
    if (!ledger.prefillCompleted(config.ingressId(), requestId)) {
      return null;
    }
    return recordPrefillCompleted(requestId);
  }

  /**
   * The first token of an own request arrived at {@code nowMillis} (the policy learns the engines'
   * timing from it); returns the event to broadcast, or null.
   */
  public PrefillCompleted prefillCompleted(String requestId, long nowMillis) {
    if (!ledger.prefillCompleted(config.ingressId(), requestId)) {
      return null;
    }
    if (feedback != null) {
      feedback.firstToken(requestId, nowMillis);
    }
    return recordPrefillCompleted(requestId);
  }

  private PrefillCompleted recordPrefillCompleted(String requestId) {
    PrefillCompleted event = new PrefillCompleted(config.ingressId(), nextSeq++, requestId);
    ownLog.record(event);
    return event;
  }

  /** An own request ended; returns the event to broadcast, or null if it was unknown. */
  public Released released(String requestId) {
    if (ledger.release(config.ingressId(), requestId) == null) {
      return null;
    }
    if (feedback != null) {
      feedback.ended(requestId);
    }
    Released event = new Released(config.ingressId(), nextSeq++, requestId);
    ownLog.record(event);
    return event;
  }

  /**
   * Applies a peer's reservation event: reservations enter the ledger and their new keys the index
   * as predicted entries; lifecycle events move or return load. Own events echoed back are no-ops.
   * Returns false when the event changed nothing (duplicate, unknown request or replica).
   */
  public boolean applyReservation(ReservationEvent event, long nowMillis) {
    if (event instanceof Reserved r) {
      int replica = ids.indexOf(r.replicaId());
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
      index.predict(replica, r.newKeys(), 0, r.newKeys().length, nowMillis + ttl(replica));
      if (feedback != null && !r.ingressId().equals(config.ingressId())) {
        feedback.peerPlaced(
            r.ingressId(),
            replica,
            r.prefillTokens(),
            r.promptTokens(),
            r.issuedMillis(),
            nowMillis);
      }
      return true;
    }
    if (event instanceof PrefillCompleted p) {
      return ledger.prefillCompleted(p.ingressId(), p.requestId());
    }
    Released released = (Released) event;
    return ledger.release(released.ingressId(), released.requestId()) != null;
  }

  /** A peer ingress left: its reservations are dropped and its sequence forgotten. */
  public int dropOrigin(String ingressId) {
    peers.forget(ingressId);
    return ledger.dropOrigin(ingressId);
  }

  // ---------------------------------------------------------------- reservation plane

  /**
   * Applies a peer's reservation event in its origin's seq order: returns the seq to ask the origin
   * to replay from when earlier events are missing, or {@link PeerSequencer.Offer#NO_GAP}. Own
   * events echoed back are ignored.
   */
  public long applyPeer(ReservationEvent event, long nowMillis) {
    if (event.ingressId().equals(config.ingressId())) {
      return PeerSequencer.Offer.NO_GAP;
    }
    PeerSequencer.Offer offer = peers.offer(event);
    for (ReservationEvent ready : offer.ready()) {
      applyReservation(ready, nowMillis);
    }
    return offer.gapFromSeq();
  }

  /** Installs an origin's answer to a replay request (its events from a seq, or a snapshot). */
  public void applyPeerReplay(ReservationReplay replay, long nowMillis) {
    if (replay.origin().equals(config.ingressId())) {
      return;
    }
    if (!replay.snapshot()) {
      for (ReservationEvent e : replay.events()) {
        applyPeer(e, nowMillis);
      }
      return;
    }
    ledger.dropOrigin(replay.origin());
    for (ReservationEvent e : replay.events()) {
      applyReservation(e, nowMillis);
    }
    for (ReservationEvent e : peers.resetTo(replay.origin(), replay.nextSeq())) {
      applyReservation(e, nowMillis);
    }
  }

  /** An origin's heartbeat: the seq to replay from when this tracker is behind it, or NO_GAP. */
  public long peerBehind(ReservationMark mark) {
    if (mark.ingressId().equals(config.ingressId())) {
      return PeerSequencer.Offer.NO_GAP;
    }
    return peers.behind(mark.ingressId(), mark.nextSeq());
  }

  /** What a peer that expects {@code fromSeq} of this tracker's events next needs. */
  public ReservationReplay ownReplay(long fromSeq) {
    return ownLog.replayFrom(fromSeq);
  }

  /** This tracker's next own reservation seq (for its heartbeat). */
  public ReservationMark ownMark() {
    return new ReservationMark(config.ingressId(), ownLog.nextSeq());
  }

  /**
   * Debug only: forgets the replica's blocks without moving its watermark, so this tracker diverges
   * from its peers at equal watermarks (to show that the consistency view catches it).
   */
  public void debugDiverge(String replicaId) {
    int replica = ids.indexOf(replicaId);
    if (replica >= 0) {
      index.clearReplica(replica);
    }
  }

  /** Watermarks and digests of every replica and origin, for the consistency view. */
  public TrackerView view(long nowMillis, boolean ready) {
    TrackerDigests d = digests();
    List<TrackerView.ReplicaMark> replicas = new ArrayList<>();
    d.replicas()
        .forEach(
            (id, st) ->
                replicas.add(
                    new TrackerView.ReplicaMark(
                        id, st.epoch(), st.seq(), st.digest().count(), st.digest().sum())));
    java.util.Set<String> origins = new java.util.TreeSet<>(peers.origins());
    origins.addAll(d.origins().keySet());
    origins.add(config.ingressId());
    List<TrackerView.OriginMark> marks = new ArrayList<>();
    for (String o : origins) {
      long seq = o.equals(config.ingressId()) ? ownLog.nextSeq() - 1 : peers.lastApplied(o);
      io.kvrouter.tracker.ledger.ReservationDigest rd = ledger.digest(o);
      marks.add(new TrackerView.OriginMark(o, seq, rd.count(), rd.sum()));
    }
    return new TrackerView(
        config.ingressId(),
        nowMillis,
        replicas.toArray(TrackerView.ReplicaMark[]::new),
        marks.toArray(TrackerView.OriginMark[]::new),
        ready);
  }

  /** Ends leases and predicted entries due at {@code nowMillis}; returns the leases ended. */
  public List<Reservation> expire(long nowMillis) {
    index.expirePredicted(nowMillis);
    List<Reservation> ended = ledger.expire(nowMillis);
    for (Reservation r : ended) {
      if (r.origin().equals(config.ingressId())) {
        ownLog.forget(r.requestId());
      }
    }
    return ended;
  }

  // ---------------------------------------------------------------- observation

  /** The load of every known replica, by target id. */
  public Map<String, ReplicaLoadSnapshot> loads() {
    Map<String, ReplicaLoadSnapshot> out = new HashMap<>();
    for (int r = 0; r < ids.capacity(); r++) {
      String id = ids.idOf(r);
      if (id != null) {
        out.put(
            id,
            new ReplicaLoadSnapshot(
                ledger.inFlight(r),
                ledger.prefillTokens(r),
                ledger.decodeTokens(r),
                ledger.waiting(r),
                ledger.running(r),
                ledger.kvUsage(r)));
      }
    }
    return out;
  }

  /** Digests of every known replica and every origin with open reservations. */
  public TrackerDigests digests() {
    Map<String, TrackerDigests.ReplicaState> replicas = new HashMap<>();
    for (int r = 0; r < ids.capacity(); r++) {
      String id = ids.idOf(r);
      if (id != null) {
        EventSequencer.Watermark w = sequencer.watermark(id);
        replicas.put(
            id,
            new TrackerDigests.ReplicaState(
                w == null ? -1 : w.epoch(), w == null ? -1 : w.seq(), index.digest(r)));
      }
    }
    return new TrackerDigests(replicas, ledger.digests());
  }

  /** The ledger, read-only, for metrics and tests. */
  public io.kvrouter.tracker.ledger.LoadView load() {
    return ledger;
  }

  /** The replica index of a target id, or -1. */
  public int replicaIndex(String targetId) {
    return ids.indexOf(targetId);
  }

  /** Index nodes (distinct blocks), for metrics. */
  public int indexedBlocks() {
    return index.nodes();
  }

  /** Open reservations, for metrics. */
  public int openReservations() {
    return ledger.openReservations();
  }

  /** The reservation of a request of {@code origin}, or null. */
  public Reservation reservation(String origin, String requestId) {
    return ledger.reservation(origin, requestId);
  }

  /**
   * Matches the first {@code count} keys of a prompt into {@code out} (reset first), without
   * reserving anything: for what-if queries, the policy lab and benchmarks. Allocation-free.
   */
  public void match(long[] keys, int count, MatchResult out) {
    index.match(keys, count, out);
  }

  /** Match of a prompt, for inspection (admin pages, tests); not for the hot path. */
  public Map<String, Integer> matchedBlocks(long[] keys) {
    MatchResult m = new MatchResult();
    index.match(keys, keys.length, m);
    Map<String, Integer> out = new HashMap<>();
    for (int r : m.holders()) {
      out.put(ids.idOf(r), m.matched(r));
    }
    return out;
  }
}
