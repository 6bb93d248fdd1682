package io.kvrouter.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.TrackerView;
import io.kvrouter.tracker.feed.EventSequencer;
import io.kvrouter.tracker.feed.GapDetected;
import io.kvrouter.tracker.sync.ReservationCodec;
import io.kvrouter.tracker.sync.ReservationSync;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;

/**
 * Several trackers (plain-Java cores, no actors) fed the event plane and the reservation plane
 * through a lossy network: KV event batches and reservation events dropped, duplicated and
 * reordered on their way into every tracker, replicas leaving, agents restarting (a new epoch, with
 * the membership change reaching each tracker at its own moment: leave then join, or only the join
 * when the new agent registered before the old one was unlisted), leases running out. Gaps are
 * repaired the way the cluster repairs them (the agent's replay or snapshot, the origin's replay,
 * heartbeats revealing lost last messages).
 *
 * <p>The contract (ARCHITECTURE.md, "Consistency, stated"): after every step, two trackers at the
 * same watermark of a stream (a replica's {@code (epoch, seq)}, an origin ingress's reservation
 * seq) report the same digest of it; and once the network is quiet and repaired, every tracker
 * agrees on every stream.
 */
class ReplicatedTrackersPropertiesTest {

  private static final String[] REPLICAS = {"r0", "r1", "r2"};
  private static final long LEASE_MILLIS = 2_000;

  @Property(tries = 300)
  void lossyPlanes_replicaLeavesAndAgentRestarts_equalWatermarksAlwaysHaveEqualDigests(
      @ForAll long seed,
      @ForAll @IntRange(min = 2, max = 4) int trackers,
      @ForAll @IntRange(min = 50, max = 400) int steps) {
    Cluster c = new Cluster(new Random(seed), trackers);
    runAndCheck(c, steps);
    Statistics.label("restarts").collect(c.restarts > 0);
    Statistics.label("leaves").collect(c.leaves > 0);
  }

  /** {@code steps} random steps, the contract after each, then quiet and converged. */
  private static void runAndCheck(Cluster c, int steps) {
    for (int i = 0; i < steps; i++) {
      c.step();
      c.assertEqualDigestsAtEqualWatermarks();
    }
    c.quiesce();
    c.assertEqualDigestsAtEqualWatermarks();
    c.assertConverged();
  }

  /**
   * The same contract with each tracker sending its reservations over the compact wire or in the
   * full form at random (a rolling upgrade's mixed cluster, or all compact): its events pass
   * through {@link ReservationCodec} and back on their way to the peers, and its replays and
   * snapshots name its reservations by seq as its live events do.
   */
  @Property(tries = 200)
  void compactAndFullReservationWires_mixed_keepTheSameContract(
      @ForAll long seed,
      @ForAll @IntRange(min = 2, max = 4) int trackers,
      @ForAll @IntRange(min = 50, max = 400) int steps) {
    Cluster c = new Cluster(new Random(seed), trackers, true);
    runAndCheck(c, steps);
    Statistics.label("compact trackers").collect(c.compactTrackers());
  }

  /** One replica's engine and agent: the blocks it holds and the batches of its current epoch. */
  private static final class Agent {
    final String id;
    final int salt;
    long epoch = 1;
    boolean live = true;
    final List<KvEventBatch> stream = new ArrayList<>();
    final Map<Long, Long> held = new LinkedHashMap<>(); // router key -> engine hash

    Agent(String id, int salt) {
      this.id = id;
      this.salt = salt;
    }

    KvEventBatch publish(KvEvent... events) {
      KvEventBatch b = new KvEventBatch(id, epoch, stream.size(), events);
      stream.add(b);
      return b;
    }

    ReplicaSnapshot snapshot() {
      long[] keys = held.keySet().stream().mapToLong(Long::longValue).toArray();
      long[] hashes = held.values().stream().mapToLong(Long::longValue).toArray();
      KvEvent[] events =
          keys.length == 0
              ? new KvEvent[0]
              : new KvEvent[] {new BlocksStored(BlocksStored.ROOT, hashes, keys, Tier.GPU)};
      return new ReplicaSnapshot(id, epoch, stream.size() - 1, events);
    }

    /** The agent's answer to a replay request from {@code fromSeq} of {@code epoch}. */
    Object replay(long askedEpoch, long fromSeq) {
      if (askedEpoch != epoch || fromSeq < 0) {
        return snapshot();
      }
      return List.copyOf(stream.subList((int) Math.min(fromSeq, stream.size()), stream.size()));
    }
  }

  /** What travels to one tracker. */
  private sealed interface Message {}

  private record Batch(KvEventBatch batch) implements Message {}

  private record Replay(List<KvEventBatch> batches) implements Message {}

  private record Snapshot(ReplicaSnapshot snapshot) implements Message {}

  private record PeerEvent(ReservationEvent event) implements Message {}

  private record PeerReplay(ReservationReplay replay) implements Message {}

  private record Down(String replica) implements Message {}

  private record Up(String replica) implements Message {}

  private static final class Cluster {
    final Random rnd;
    final List<KvTrackerCore> cores = new ArrayList<>();
    final List<Deque<Message>> network = new ArrayList<>(); // lossy, reordered
    final List<Deque<Message>> membership = new ArrayList<>(); // in order, at its own pace
    final Map<String, Agent> agents = new LinkedHashMap<>();
    final List<Map<String, Boolean>> open = new ArrayList<>(); // own request -> prefilled
    final double drop;
    final double duplicate;
    final double reorder;
    final Deque<String> trace = new ArrayDeque<>(); // the last steps, for a failure's message
    long now;
    int requests;
    int restarts;
    int leaves;
    final List<ReservationCodec> compact = new ArrayList<>(); // null: the full form

    Cluster(Random rnd, int trackers) {
      this(rnd, trackers, false);
    }

    /**
     * @param mixedWires each tracker picks the compact wire or the full form at random
     */
    Cluster(Random rnd, int trackers, boolean mixedWires) {
      this.rnd = rnd;
      this.drop = rnd.nextDouble() * 0.3;
      this.duplicate = rnd.nextDouble() * 0.3;
      this.reorder = rnd.nextDouble() * 0.5;
      for (int i = 0; i < REPLICAS.length; i++) {
        agents.put(REPLICAS[i], new Agent(REPLICAS[i], 7919 * (i + 1)));
      }
      for (int t = 0; t < trackers; t++) {
        boolean compactWire = mixedWires && rnd.nextBoolean();
        compact.add(compactWire ? new ReservationCodec(1000L + t) : null);
        KvTrackerCore core =
            new KvTrackerCore(
                TrackerConfig.defaults("in-" + t)
                    .withLeaseAndTtls(LEASE_MILLIS, LEASE_MILLIS / 2, LEASE_MILLIS)
                    .withCompactReservations(compactWire));
        for (String r : REPLICAS) {
          core.replicaUp(KvTrackerCoreTest.replica(r, true));
        }
        cores.add(core);
        network.add(new ArrayDeque<>());
        membership.add(new ArrayDeque<>());
        open.add(new LinkedHashMap<>());
      }
    }

    // ------------------------------------------------------------ steps

    void step() {
      int op = rnd.nextInt(100);
      if (op < 12) {
        route();
      } else if (op < 20) {
        prefillOrRelease();
      } else if (op < 30) {
        engineStores();
      } else if (op < 35) {
        engineRemoves();
      } else if (op < 37) {
        agentRestarts();
      } else if (op < 38) {
        replicaLeaves();
      } else if (op < 42) {
        tick(rnd.nextInt((int) (LEASE_MILLIS / 4)));
      } else if (op < 46) {
        heartbeats(rnd.nextInt(cores.size()));
      } else if (op < 52) {
        deliverMembership(rnd.nextInt(cores.size()));
      } else {
        deliver(rnd.nextInt(cores.size()), true);
      }
    }

    long[] prompt() {
      int family = rnd.nextInt(4);
      int[] tokens = KvTrackerCoreTest.tokens(16 * (1 + rnd.nextInt(6)), family + 1);
      return KvTrackerCoreTest.KEYS.keys(tokens);
    }

    void route() {
      int t = rnd.nextInt(cores.size());
      long[] keys = prompt();
      String id = "q" + requests++;
      Decision d =
          cores.get(t).selectAndReserve(new RouteRequest(id, "m", keys, 16 * keys.length), now);
      if (d.reserved() != null) {
        log("in-" + t + " reserves " + d.reserved());
        open.get(t).put(id, false);
        broadcast(t, d.reserved());
      }
    }

    void prefillOrRelease() {
      int t = rnd.nextInt(cores.size());
      Map<String, Boolean> mine = open.get(t);
      if (mine.isEmpty()) {
        return;
      }
      String id = new ArrayList<>(mine.keySet()).get(rnd.nextInt(mine.size()));
      if (!mine.get(id) && rnd.nextBoolean()) {
        mine.put(id, true);
        ReservationEvent e = cores.get(t).prefillCompleted(id, now);
        log("in-" + t + " prefilled " + id + ": " + e);
        broadcast(t, e);
      } else {
        mine.remove(id);
        ReservationEvent e = cores.get(t).released(id);
        log("in-" + t + " released " + id + ": " + e);
        broadcast(t, e);
      }
    }

    Agent liveAgent() {
      List<Agent> live = agents.values().stream().filter(a -> a.live).toList();
      return live.isEmpty() ? null : live.get(rnd.nextInt(live.size()));
    }

    void engineStores() {
      Agent a = liveAgent();
      if (a == null) {
        return;
      }
      long[] keys = prompt();
      int n = 1 + rnd.nextInt(keys.length);
      long[] k = java.util.Arrays.copyOf(keys, n);
      long[] h = new long[n];
      for (int i = 0; i < n; i++) {
        h[i] = k[i] * 31 + a.salt;
        a.held.put(k[i], h[i]);
      }
      publish(a, new BlocksStored(BlocksStored.ROOT, h, k, Tier.GPU));
    }

    void engineRemoves() {
      Agent a = liveAgent();
      if (a == null || a.held.isEmpty()) {
        return;
      }
      List<Long> keys = new ArrayList<>(a.held.keySet());
      int n = 1 + rnd.nextInt(Math.min(3, keys.size()));
      long[] h = new long[n];
      for (int i = 0; i < n; i++) {
        long key = keys.get(rnd.nextInt(keys.size()));
        Long hash = a.held.remove(key);
        h[i] = hash == null ? key * 31 + a.salt : hash;
      }
      publish(a, new BlocksRemoved(h, Tier.GPU));
    }

    void publish(Agent a, KvEvent event) {
      KvEventBatch b = a.publish(event);
      for (int t = 0; t < cores.size(); t++) {
        send(t, new Batch(b));
      }
    }

    /**
     * The agent restarts (a new epoch, knowing nothing) and registers again: each tracker sees the
     * old registration leave and the new one join, or (when the new one was listed before the old
     * one was unlisted) only the join.
     */
    void agentRestarts() {
      Agent a = agents.get(REPLICAS[rnd.nextInt(REPLICAS.length)]);
      a.epoch++;
      a.stream.clear();
      a.held.clear();
      boolean wasLive = a.live;
      a.live = true;
      restarts++;
      for (int t = 0; t < cores.size(); t++) {
        if (!wasLive || rnd.nextBoolean()) {
          if (wasLive) {
            membership.get(t).add(new Down(a.id));
          }
          membership.get(t).add(new Up(a.id));
        } else {
          membership.get(t).add(new Up(a.id));
        }
      }
    }

    void replicaLeaves() {
      Agent a = liveAgent();
      if (a == null) {
        return;
      }
      a.live = false;
      leaves++;
      for (int t = 0; t < cores.size(); t++) {
        membership.get(t).add(new Down(a.id));
      }
    }

    void tick(long millis) {
      now += millis;
      log("now " + now);
      for (int t = 0; t < cores.size(); t++) {
        for (ReservationEvent ended : cores.get(t).expire(now)) {
          log("in-" + t + " lease ended: " + ended);
          broadcast(t, ended);
        }
      }
    }

    /** Agents' load heartbeats and peers' reservation marks reach tracker {@code t}. */
    void heartbeats(int t) {
      KvTrackerCore core = cores.get(t);
      for (Agent a : agents.values()) {
        if (a.live && !a.stream.isEmpty()) {
          GapDetected gap = core.behind(a.id, a.epoch, a.stream.size() - 1);
          if (gap != null) {
            askReplay(t, gap.replicaId(), gap.epoch(), gap.fromSeq());
          }
        }
      }
      for (int o = 0; o < cores.size(); o++) {
        if (o != t) {
          long from = core.peerBehind(cores.get(o).ownMark());
          if (from != ReservationSync.NO_GAP) {
            askPeerReplay(t, o, from);
          }
        }
      }
    }

    void broadcast(int origin, ReservationEvent event) {
      if (event == null) {
        return;
      }
      ReservationCodec codec = compact.get(origin);
      ReservationEvent sent =
          codec == null ? event : ReservationCodec.decode(codec.encode(event), event.ingressId());
      for (int t = 0; t < cores.size(); t++) {
        if (t != origin) {
          send(t, new PeerEvent(sent));
        }
      }
    }

    long compactTrackers() {
      return compact.stream().filter(java.util.Objects::nonNull).count();
    }

    /** A message onto the lossy network: maybe lost, maybe twice. */
    void send(int t, Message m) {
      if (rnd.nextDouble() < drop) {
        return;
      }
      network.get(t).add(m);
      if (rnd.nextDouble() < duplicate) {
        network.get(t).add(m);
      }
    }

    void askReplay(int t, String replica, long epoch, long fromSeq) {
      Agent a = agents.get(replica);
      if (a == null || !a.live) {
        return; // nobody answers for a replica that left
      }
      Object answer = a.replay(epoch, fromSeq);
      Message reply =
          answer instanceof ReplicaSnapshot s ? new Snapshot(s) : new Replay(castBatches(answer));
      if (rnd.nextDouble() >= drop) { // an answer may time out too
        network.get(t).add(reply);
      }
    }

    @SuppressWarnings("unchecked")
    static List<KvEventBatch> castBatches(Object o) {
      return (List<KvEventBatch>) o;
    }

    void askPeerReplay(int t, int origin, long fromSeq) {
      ReservationReplay replay = cores.get(origin).ownReplay(fromSeq);
      if (rnd.nextDouble() >= drop) {
        network.get(t).add(new PeerReplay(replay));
      }
    }

    void deliverMembership(int t) {
      Message m = membership.get(t).poll();
      if (m != null) {
        apply(t, m);
      }
    }

    void deliver(int t, boolean reorder) {
      Deque<Message> q = network.get(t);
      if (q.isEmpty()) {
        return;
      }
      Message m;
      if (reorder && q.size() > 1 && rnd.nextDouble() < this.reorder) {
        List<Message> list = new ArrayList<>(q);
        m = list.remove(1 + rnd.nextInt(Math.min(4, list.size() - 1)));
        q.clear();
        q.addAll(list);
      } else {
        m = q.poll();
      }
      apply(t, m);
    }

    void log(String line) {
      if (trace.size() == 60) {
        trace.poll();
      }
      trace.add(line);
    }

    void apply(int t, Message m) {
      log("in-" + t + " <- " + m);
      KvTrackerCore core = cores.get(t);
      if (m instanceof Batch b) {
        applyBatch(t, b.batch());
      } else if (m instanceof Replay r) {
        r.batches().forEach(b -> applyBatch(t, b));
      } else if (m instanceof Snapshot s) {
        core.installSnapshot(s.snapshot());
      } else if (m instanceof PeerEvent e) {
        long from = core.applyPeer(e.event(), now);
        if (from != ReservationSync.NO_GAP) {
          askPeerReplay(t, indexOf(e.event().ingressId()), from);
        }
      } else if (m instanceof PeerReplay r) {
        core.applyPeerReplay(r.replay(), now);
      } else if (m instanceof Down d) {
        core.replicaDown(d.replica());
      } else if (m instanceof Up u) {
        core.replicaUp(KvTrackerCoreTest.replica(u.replica(), true));
        askReplay(t, u.replica(), Long.MIN_VALUE, -1); // the bootstrap snapshot
      }
    }

    void applyBatch(int t, KvEventBatch batch) {
      EventSequencer.Verdict v = cores.get(t).apply(batch);
      if (v.outcome() == EventSequencer.Outcome.GAP) {
        askReplay(t, batch.replicaId(), v.epoch(), v.expectedSeq());
      }
    }

    int indexOf(String ingressId) {
      return Integer.parseInt(ingressId.substring(3));
    }

    /** Everything in flight arrives, in order and without faults; gaps and heartbeats repaired. */
    void quiesce() {
      for (int round = 0; round < 50; round++) {
        boolean any = false;
        for (int t = 0; t < cores.size(); t++) {
          while (!membership.get(t).isEmpty()) {
            deliverMembership(t);
            any = true;
          }
          while (!network.get(t).isEmpty()) {
            deliver(t, false);
            any = true;
          }
        }
        for (int t = 0; t < cores.size(); t++) {
          heartbeatsReliably(t);
        }
        if (!any && network.stream().allMatch(Deque::isEmpty)) {
          return;
        }
      }
    }

    void heartbeatsReliably(int t) {
      KvTrackerCore core = cores.get(t);
      for (Agent a : agents.values()) {
        TrackerDigests.ReplicaState state = core.digests().replicas().get(a.id);
        if (a.live && (state == null || state.epoch() < a.epoch)) {
          network.get(t).add(new Snapshot(a.snapshot())); // the bootstrap, asked again
        } else if (a.live && !a.stream.isEmpty()) {
          GapDetected gap = core.behind(a.id, a.epoch, a.stream.size() - 1);
          if (gap != null) {
            Object answer = a.replay(gap.epoch(), gap.fromSeq());
            network
                .get(t)
                .add(
                    answer instanceof ReplicaSnapshot s
                        ? new Snapshot(s)
                        : new Replay(castBatches(answer)));
          }
        }
      }
      for (int o = 0; o < cores.size(); o++) {
        if (o != t) {
          long from = core.peerBehind(cores.get(o).ownMark());
          if (from != ReservationSync.NO_GAP) {
            network.get(t).add(new PeerReplay(cores.get(o).ownReplay(from)));
          }
        }
      }
    }

    // ------------------------------------------------------------ checks

    List<TrackerView> views() {
      List<TrackerView> out = new ArrayList<>();
      for (KvTrackerCore core : cores) {
        out.add(core.view(now, true));
      }
      return out;
    }

    void assertEqualDigestsAtEqualWatermarks() {
      List<TrackerView> views = views();
      Map<String, TrackerView.ReplicaMark> firstReplica = new HashMap<>();
      Map<String, TrackerView.OriginMark> firstOrigin = new HashMap<>();
      for (TrackerView v : views) {
        for (TrackerView.ReplicaMark m : v.replicas()) {
          String key = m.replicaId() + "@" + m.epoch() + ":" + m.seq();
          TrackerView.ReplicaMark seen = firstReplica.putIfAbsent(key, m);
          if (seen != null) {
            assertThat(List.of(m.blocks(), m.digest()))
                .as(
                    "replica %s at %s:%s on %s after%n%s",
                    m.replicaId(), m.epoch(), m.seq(), v.ingressId(), String.join("\n", trace))
                .isEqualTo(List.of(seen.blocks(), seen.digest()));
          }
        }
        for (TrackerView.OriginMark m : v.origins()) {
          String key = m.origin() + "@" + m.seq();
          TrackerView.OriginMark seen = firstOrigin.putIfAbsent(key, m);
          if (seen != null) {
            assertThat(List.of(m.count(), m.digest()))
                .as(
                    "origin %s at seq %s on %s after%n%s",
                    m.origin(), m.seq(), v.ingressId(), String.join("\n", trace))
                .isEqualTo(List.of(seen.count(), seen.digest()));
          }
        }
      }
    }

    void assertConverged() {
      List<TrackerView> views = views();
      Map<String, Long> originSeq = new HashMap<>();
      for (TrackerView v : views) {
        for (TrackerView.OriginMark m : v.origins()) {
          Long before = originSeq.putIfAbsent(m.origin(), m.seq());
          if (before != null) {
            assertThat(m.seq()).as("origin %s on %s", m.origin(), v.ingressId()).isEqualTo(before);
          }
        }
      }
      for (Agent a : agents.values()) {
        if (!a.live) {
          continue;
        }
        for (TrackerView v : views) {
          TrackerView.ReplicaMark mark = null;
          for (TrackerView.ReplicaMark m : v.replicas()) {
            if (m.replicaId().equals(a.id)) {
              mark = m;
            }
          }
          assertThat(mark).as("%s on %s", a.id, v.ingressId()).isNotNull();
          assertThat(List.of(mark.epoch(), mark.seq()))
              .as("%s on %s", a.id, v.ingressId())
              .isEqualTo(List.of(a.epoch, (long) a.stream.size() - 1));
        }
      }
    }
  }
}
