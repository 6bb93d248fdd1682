package io.kvrouter.tracker;

import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationMark;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.TrackerReport;
import io.kvrouter.protocol.TrackerView;
import io.kvrouter.tracker.feed.EventSequencer;
import io.kvrouter.tracker.feed.GapDetected;
import io.kvrouter.tracker.feed.ReplicaFeed;
import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.index.ReplicaIds;
import io.kvrouter.tracker.ledger.LoadLedger;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.ledger.Reservation;
import io.kvrouter.tracker.ledger.ReservationDigest;
import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.WatchesPeers;
import io.kvrouter.tracker.sync.ReservationSync;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The tracker: one prefix index, one load ledger and one policy over the replicas it knows, behind
 * the operations the {@code KvTracker} actor (or the policy lab) calls. Plain Java; time is passed
 * in, so it runs in virtual time too. A facade over five parts, one job each:
 *
 * <ul>
 *   <li>{@link Membership}: {@link #replicaUp}/{@link #replicaDown}. Down purges the replica from
 *       the index, the ledger, the policy and the candidate set at once.
 *   <li>{@link ReplicaFeed}: {@link #apply(KvEventBatch)} applies a batch if it is the next one of
 *       its replica and returns the verdict, so the caller can request a replay on a gap; {@link
 *       #behind} and {@link #installSnapshot} repair.
 *   <li>{@link Placement}: {@link #selectAndReserve} (match, rank, pick, reserve, predict; returns
 *       the decision with the {@code Reserved} event to broadcast), {@link
 *       #prefillCompleted}/{@link #released} (the event to broadcast, or {@code null} for an
 *       unknown request) and {@link #applyReservation}.
 *   <li>{@link ReservationSync}: peers' events in their origin's order ({@link #applyPeer}, {@link
 *       #applyPeerReplay}, {@link #peerBehind}), own events for peers' catch-up ({@link
 *       #ownReplay}, {@link #ownMark}). Own echoes are ignored.
 *   <li>Views: {@link #view}, {@link #digests}, {@link #loads}, {@link #matchedBlocks}.
 * </ul>
 *
 * {@link #expire} ends leases and predicted entries due at {@code nowMillis}. Not thread-safe: one
 * owner.
 *
 * <p>Over 450 lines because it is the facade: one short, documented delegating method per operation
 * the actor and the lab call; the work is in the five parts.
 */
public final class KvTrackerCore {

  private final TrackerConfig config;
  private final Membership replicas = new Membership();
  private final ReplicaIds ids = replicas.ids();
  private final PrefixIndex index;
  private final LoadLedger ledger;
  private final Policy policy;
  private final WatchesPeers peers;
  private final ReplicaFeed feed;
  private final ReservationSync sync;
  private final Coordination coordination;
  private final Placement placement;

  public KvTrackerCore(TrackerConfig config) {
    this.config = config;
    this.index = new PrefixIndex(config.expectedBlocks(), config.maxIndexBytes());
    this.ledger = new LoadLedger(ids::idOf);
    // Seeded per ingress: routers acting on the same state must not draw the same tie-breaks.
    this.policy =
        Policies.create(
            config.policy(),
            config.busy(),
            new SplittableRandom(
                config.seed() ^ (config.ingressId().hashCode() * 0x9E3779B97F4A7C15L)));
    this.peers = policy instanceof WatchesPeers w ? w : null;
    if (peers != null) {
      peers.bindRouter(config.ingressId());
    }
    this.feed = new ReplicaFeed(index, ids);
    this.sync = new ReservationSync(config.ingressId(), config.compactReservations());
    Matcher matcher = new Matcher(replicas, index);
    this.coordination = new Coordination(policy, replicas, matcher);
    this.placement =
        new Placement(config, replicas, matcher, index, ledger, policy, sync, coordination);
  }

  public TrackerConfig config() {
    return config;
  }

  // ---------------------------------------------------------------- membership

  /** A replica joined (or re-announced itself); see {@link Membership} for the block-size rule. */
  public void replicaUp(ReplicaInfo info) {
    replicas.up(info);
    attach(info.targetId());
  }

  /**
   * A replica left: it is no candidate any more, and its blocks, watermark and reported load are
   * forgotten. Reservations on it stay, detached, until their origins end them: they belong to
   * their origins' streams, which this tracker does not see in step with the membership.
   */
  public void replicaDown(String targetId) {
    int replica = ids.indexOf(targetId);
    if (replica >= 0) {
      index.dropReplica(replica);
      ledger.detachReplica(replica);
      policy.onReplicaRemoved(replica);
    }
    replicas.down(targetId);
    feed.forget(targetId);
  }

  /** The replica's id has an index (again): reservations held for it weigh on its load. */
  private void attach(String targetId) {
    int replica = ids.indexOf(targetId);
    if (replica >= 0) {
      ledger.attachReplica(targetId, replica);
    }
  }

  /** Known replicas' target ids. */
  public List<String> replicas() {
    return replicas.announced();
  }

  // ---------------------------------------------------------------- event plane

  /** Applies a batch if it is its replica's next one (see {@link ReplicaFeed#apply}). */
  public EventSequencer.Verdict apply(KvEventBatch batch) {
    EventSequencer.Verdict verdict = feed.apply(batch);
    attach(batch.replicaId());
    if (verdict.outcome() == EventSequencer.Outcome.NEW_EPOCH) {
      startedAfresh(batch.replicaId());
    }
    return verdict;
  }

  /** The gap to repair when an agent's heartbeat shows this tracker behind, or null. */
  public GapDetected behind(String replicaId, long epoch, long lastSeq) {
    return feed.behind(replicaId, epoch, lastSeq);
  }

  /** Replaces the replica's state by an agent's snapshot and continues after its last seq. */
  public void installSnapshot(ReplicaSnapshot snapshot) {
    boolean laterEpoch = feed.installSnapshot(snapshot);
    attach(snapshot.replicaId());
    if (laterEpoch) {
      startedAfresh(snapshot.replicaId());
    }
  }

  /**
   * A known replica's stream moved to a later epoch: its engine is likely a new process (a restart
   * arrives as one; so does an agent's restart or a loss of batches), so the policy starts over
   * what it learned of the old one, such as its lag and that lag's warm-up.
   */
  private void startedAfresh(String targetId) {
    int replica = ids.indexOf(targetId);
    if (replica >= 0 && peers != null) {
      peers.onReplicaStartedAfresh(replica);
    }
  }

  /** Records an engine load report. */
  public void loadReported(ReplicaLoad load) {
    int replica = ids.indexOf(load.replicaId());
    if (replica >= 0) {
      ledger.reportLoad(replica, load.running(), load.waiting(), load.kvUsage());
    }
  }

  // ---------------------------------------------------------------- decisions

  /**
   * What comes before a broadcast-mode decision: holds, intents and the shared timing model, as far
   * as the policy has them.
   */
  public Coordination coordination() {
    return coordination;
  }

  /** Matches, ranks, picks, reserves and predicts in one step. */
  public Decision selectAndReserve(RouteRequest request, long nowMillis) {
    return placement.selectAndReserve(request, nowMillis, true);
  }

  /**
   * {@link #selectAndReserve(RouteRequest, long)} that holds the reservation back from the peers
   * (the decision carries none) until {@link #announce} (strict mode: until its gate admits it); a
   * release before that drops it without an event.
   */
  public Decision selectAndReserveUnannounced(RouteRequest request, long nowMillis) {
    return placement.selectAndReserve(request, nowMillis, false);
  }

  /**
   * A held-back reservation stands: returns its event to broadcast, or null when there is none
   * (already announced, released, or its lease ended).
   */
  public Reserved announce(String requestId) {
    return placement.announce(requestId);
  }

  /** {@link #prefillCompleted(String, long)} for callers without a clock. */
  public PrefillCompleted prefillCompleted(String requestId) {
    return prefillCompleted(requestId, -1);
  }

  /**
   * The first token of an own request arrived at {@code nowMillis} (negative: unknown); returns the
   * event to broadcast, or null. Its predicted entries now wait for the engine's confirmation (see
   * {@link TrackerConfig#predictedConfirmMillis}).
   */
  public PrefillCompleted prefillCompleted(String requestId, long nowMillis) {
    return placement.prefillCompleted(requestId, nowMillis);
  }

  /** {@link #released(String, long)} for callers without a clock. */
  public Released released(String requestId) {
    return released(requestId, -1);
  }

  /**
   * An own request ended at {@code nowMillis} (negative: unknown); returns the event to broadcast,
   * or null if it was unknown.
   */
  public Released released(String requestId, long nowMillis) {
    return placement.released(requestId, nowMillis);
  }

  /**
   * Applies a reservation event as it comes, without ordering (the lab's broadcast is in order):
   * returns false when it changed nothing (duplicate, unknown request or replica).
   */
  public boolean applyReservation(ReservationEvent event, long nowMillis) {
    return placement.applyReservation(event, nowMillis);
  }

  /** A peer ingress left: its reservations are dropped and its sequence forgotten. */
  public int dropOrigin(String ingressId) {
    sync.forget(ingressId);
    return ledger.dropOrigin(ingressId);
  }

  // ---------------------------------------------------------------- reservation plane

  /**
   * Applies a peer's reservation event in its origin's seq order: returns the seq to ask the origin
   * to replay from when earlier events are missing, or {@link ReservationSync#NO_GAP}.
   */
  public long applyPeer(ReservationEvent event, long nowMillis) {
    return sync.offer(event, e -> placement.applyReservation(e, nowMillis));
  }

  /** Installs an origin's answer to a replay request (its events from a seq, or a snapshot). */
  public void applyPeerReplay(ReservationReplay replay, long nowMillis) {
    sync.replayed(replay, ledger::dropOrigin, e -> placement.applyReservation(e, nowMillis));
  }

  /** An origin's heartbeat: the seq to replay from when this tracker is behind it, or NO_GAP. */
  public long peerBehind(ReservationMark mark) {
    return sync.behind(mark);
  }

  /**
   * {@link #peerBehind(ReservationMark)}, telling the policy at {@code nowMillis} that the mark's
   * origin is alive (so it counts that router before the first burst, not after).
   */
  public long peerBehind(ReservationMark mark, long nowMillis) {
    if (peers != null) {
      peers.onPeerHeard(mark.ingressId(), nowMillis);
    }
    return sync.behind(mark);
  }

  /** What a peer that expects {@code fromSeq} of this tracker's events next needs. */
  public ReservationReplay ownReplay(long fromSeq) {
    return sync.ownReplay(fromSeq);
  }

  /** This tracker's next own reservation seq (for its heartbeat). */
  public ReservationMark ownMark() {
    return sync.ownMark();
  }

  /**
   * Ends leases and predicted entries due at {@code nowMillis}. An own reservation whose lease
   * ended is released like any other, so the returned {@code Released} events must be broadcast:
   * peers end it at the same point of this tracker's stream (they keep no lease of their own on a
   * peer's reservation, see {@link Placement#applyReservation}).
   */
  public List<Released> expire(long nowMillis) {
    index.expirePredicted(nowMillis);
    List<Released> events = new ArrayList<>();
    for (Reservation r : ledger.expire(nowMillis)) {
      if (sync.isSelf(r.origin())) {
        events.add(sync.originate(seq -> new Released(r.origin(), seq, r.requestId())));
        placement.ownLeaseEnded(r.requestId(), nowMillis);
      }
    }
    return events;
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

  // ---------------------------------------------------------------- views

  /** Watermarks and digests of every replica and origin, for the consistency view. */
  public TrackerView view(long nowMillis, boolean ready) {
    return report(nowMillis, ready).view();
  }

  /**
   * {@link #view} with the holdings of each replica this tracker's index memory budget evicted (its
   * digest of such a replica is of what it still holds); the ingress adds its accuracy figures.
   */
  public TrackerReport report(long nowMillis, boolean ready) {
    TrackerDigests d = digests();
    List<TrackerView.ReplicaMark> marks = new ArrayList<>();
    List<TrackerReport.Trim> trims = new ArrayList<>();
    d.replicas()
        .forEach(
            (id, st) -> {
              marks.add(
                  new TrackerView.ReplicaMark(
                      id, st.epoch(), st.seq(), st.digest().count(), st.digest().sum()));
              long evicted = index.evicted(ids.indexOf(id));
              if (evicted > 0) {
                trims.add(new TrackerReport.Trim(id, evicted));
              }
            });
    Set<String> origins = sync.origins();
    origins.addAll(d.origins().keySet());
    List<TrackerView.OriginMark> originMarks = new ArrayList<>();
    for (String o : origins) {
      ReservationDigest rd = ledger.digest(o);
      originMarks.add(new TrackerView.OriginMark(o, sync.lastSeq(o), rd.count(), rd.sum()));
    }
    TrackerView view =
        new TrackerView(
            config.ingressId(),
            nowMillis,
            marks.toArray(TrackerView.ReplicaMark[]::new),
            originMarks.toArray(TrackerView.OriginMark[]::new),
            ready);
    return new TrackerReport(
        view, trims.toArray(TrackerReport.Trim[]::new), new TrackerReport.Accuracy[0]);
  }

  /** Digests of every known replica and every origin with open reservations. */
  public TrackerDigests digests() {
    Map<String, TrackerDigests.ReplicaState> states = new HashMap<>();
    for (int r = 0; r < ids.capacity(); r++) {
      String id = ids.idOf(r);
      if (id != null) {
        EventSequencer.Watermark w = feed.watermark(id);
        states.put(
            id,
            new TrackerDigests.ReplicaState(
                w == null ? -1 : w.epoch(), w == null ? -1 : w.seq(), index.digest(r)));
      }
    }
    return new TrackerDigests(states, ledger.digests());
  }

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

  /**
   * How much later than predicted this router's first tokens from every known replica have lately
   * come, ms, by target id ({@link WatchesPeers#lagMillis}; 0 for a policy that keeps none): this
   * router's own observation, not shared.
   */
  public Map<String, Double> lags(long nowMillis) {
    Map<String, Double> out = new HashMap<>();
    for (int r = 0; r < ids.capacity(); r++) {
      String id = ids.idOf(r);
      if (id != null) {
        out.put(id, peers == null ? 0 : peers.lagMillis(r, nowMillis));
      }
    }
    return out;
  }

  /** The ledger, read-only, for metrics and tests. */
  public LoadView load() {
    return ledger;
  }

  /** The replica index of a target id, or -1. */
  public int replicaIndex(String targetId) {
    return ids.indexOf(targetId);
  }

  /** Open reservations, for metrics. */
  public int openReservations() {
    return ledger.openReservations();
  }

  /** The size of this tracker's state now. */
  public TrackerStats stats() {
    return new TrackerStats(
        index.nodes(),
        index.holdings(),
        index.estimatedBytes(),
        index.predictedRuns(),
        ledger.openReservations(),
        ledger.detachedReservations(),
        index.evictedHoldings());
  }

  /**
   * Matches the first {@code count} keys of a prompt into {@code out} (reset first), without
   * reserving anything: for what-if queries and benchmarks. Allocation-free.
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
