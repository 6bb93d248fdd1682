package io.kvrouter.tracker.bench;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.TrackerStats;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.ref.Reference;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;

/**
 * The event plane at scale, on one thread: what one ingress's tracker holds per block and applies
 * per second when it follows {@code R} replicas, and what an agent spends on each batch it sends to
 * an ingress. Bounded: a few seconds per figure. Run with {@code kv-tracker/bench-scale.sh} (args:
 * replica counts, default 64,256,1024).
 *
 * <p>The streams replay the shape of what a vLLM replica publishes under a chat load (the lab's
 * {@code many-sessions} workload; kv-events.md): every batch stores one run of {@link #RUN} new
 * blocks chained to the replica's previous run, and once the replica holds its capacity ({@code
 * blocksPerReplica}) the same batch removes its oldest run (vLLM evicts least recently used
 * blocks); one run in {@link #SHARED_EVERY} is a system-prompt run from a pool of {@link
 * #SHARED_POOL} shared by every replica (stored only by a replica that does not hold it), so
 * popular blocks have many holders, as the engines' shared prefixes do. Each replica's stream is
 * generated from its own seed; the batches are built before timing.
 *
 * <ul>
 *   <li><b>Memory</b>: heap after full GCs with the index filled to every replica's capacity, less
 *       the heap before, per (replica, block) holding and per distinct block; and the tracker's own
 *       estimate ({@link TrackerStats#indexBytes()}).
 *   <li><b>Apply</b>: steady state, replicas taking turns, each batch storing a run and removing
 *       the oldest; block events (stores + removals) per second of the thread's CPU time.
 *   <li><b>Agent</b>: the batch through the cluster's serializer (Kryo, as Pekko sends it to each
 *       ingress), CPU time per batch for {@code toBinary} and, on the ingress, {@code fromBinary},
 *       and the bytes.
 * </ul>
 */
public final class EventPlaneScale {

  static final int RUN = 16;
  static final int SHARED_EVERY = 8;
  static final int SHARED_POOL = 256;
  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

  private EventPlaneScale() {}

  /** One replica's stream: what it holds, in order, and its next seq. */
  private static final class Stream {
    final int replica;
    final ArrayDeque<long[]> held = new ArrayDeque<>();
    final ArrayDeque<long[]> heldHashes = new ArrayDeque<>();
    final Set<Integer> sharedHeld = new HashSet<>();
    final ArrayDeque<Integer> heldShared = new ArrayDeque<>();
    final SplittableRandom rnd;
    long seq = 0;
    long parent = BlocksStored.ROOT;

    Stream(int replica) {
      this.replica = replica;
      this.rnd = new SplittableRandom(1000L + replica);
    }

    /** The next batch: one run stored, and the oldest run removed once at {@code capacity}. */
    KvEventBatch next(long[][] shared, int capacity) {
      long[] keys;
      int sharedId = -1;
      if (rnd.nextInt(SHARED_EVERY) == 0) {
        int s = rnd.nextInt(SHARED_POOL);
        if (!sharedHeld.contains(s)) {
          sharedId = s;
        }
      }
      long parentKey;
      if (sharedId >= 0) {
        keys = shared[sharedId];
        parentKey = BlocksStored.ROOT;
        sharedHeld.add(sharedId);
      } else {
        keys = new long[RUN];
        for (int i = 0; i < RUN; i++) {
          keys[i] = rnd.nextLong() | 1;
        }
        parentKey = parent;
      }
      long[] hashes = new long[RUN];
      for (int i = 0; i < RUN; i++) {
        hashes[i] = keys[i] * 0x9E3779B97F4A7C15L + replica;
      }
      List<KvEvent> events = new ArrayList<>(2);
      events.add(new BlocksStored(parentKey, hashes, keys, Tier.GPU));
      held.add(keys);
      heldHashes.add(hashes);
      heldShared.add(sharedId);
      parent = sharedId >= 0 ? parent : keys[RUN - 1];
      if ((long) held.size() * RUN > capacity) {
        held.poll();
        long[] oldHashes = heldHashes.poll();
        int oldShared = heldShared.poll();
        if (oldShared >= 0) {
          sharedHeld.remove(oldShared);
        }
        events.add(new BlocksRemoved(oldHashes, Tier.GPU));
      }
      return new KvEventBatch("replica-" + replica, 1, seq++, events.toArray(new KvEvent[0]));
    }
  }

  public static void main(String[] args) throws Exception {
    int[] counts =
        args.length > 0
            ? Arrays.stream(args[0].split(",")).mapToInt(Integer::parseInt).toArray()
            : new int[] {64, 256, 1024};
    int capacity = Integer.getInteger("scale.blocksPerReplica", 8192);
    double seconds = Double.parseDouble(System.getProperty("scale.seconds", "5"));
    System.out.printf(
        Locale.ROOT,
        "Event plane at scale: %d blocks held per replica, runs of %d blocks, 1 in %d a shared"
            + " system-prompt run (pool %d); %.0f s of apply per count; one thread.%n%n",
        capacity,
        RUN,
        SHARED_EVERY,
        SHARED_POOL,
        seconds);
    System.out.println(
        "| replicas | holdings | distinct blocks | heap B / holding | heap B / block | estimate B /"
            + " holding | apply block events/s (CPU) | batches/s |");
    System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (int replicas : counts) {
      scale(replicas, capacity, seconds);
    }
    agent();
  }

  private static long[][] sharedRuns() {
    SplittableRandom rnd = new SplittableRandom(7);
    long[][] shared = new long[SHARED_POOL][RUN];
    for (long[] run : shared) {
      for (int i = 0; i < RUN; i++) {
        run[i] = rnd.nextLong() | 1;
      }
    }
    return shared;
  }

  private static void scale(int replicas, int capacity, double seconds) {
    long[][] shared = sharedRuns();
    Stream[] streams = new Stream[replicas];
    for (int r = 0; r < replicas; r++) {
      streams[r] = new Stream(r);
    }
    long before = HeapPerBlock.usedAfterGc();
    KvTrackerCore tracker =
        new KvTrackerCore(
            TrackerConfig.defaults("bench-ingress").withExpectedBlocks(replicas * capacity));
    for (int r = 0; r < replicas; r++) {
      tracker.replicaUp(
          new ReplicaInfo(
              "replica-" + r,
              0,
              ClusterFixture.MODEL,
              "http://r" + r,
              ClusterFixture.BLOCK_SIZE,
              List.of(Tier.GPU),
              "both",
              true,
              true));
    }
    // Fill every replica to its capacity, one run at a time, replicas taking turns.
    int runs = capacity / RUN;
    for (int i = 0; i < runs; i++) {
      for (Stream s : streams) {
        tracker.apply(s.next(shared, capacity));
      }
    }
    // Holdings at steady state are what the fill left: memory first, then the ring.
    long after = HeapPerBlock.usedAfterGc();
    TrackerStats stats = tracker.stats();
    // The generator keeps its own copy of every held run (keys and hashes, two long[16] of 144
    // bytes each with their headers, plus three deque slots): not the tracker's.
    long generator = 0;
    for (Stream s : streams) {
      generator += s.held.size() * (2L * (16 + 8 * RUN) + 3 * 4);
    }
    double tracked = after - before - generator;
    double perHolding = tracked / stats.indexHoldings();
    double perBlock = tracked / stats.indexBlocks();
    double estimate = stats.indexBytes() / (double) stats.indexHoldings();
    // The steady-state batches, built before timing (about 64 MB at most).
    int ring = Math.min(1 << 16, Math.max(replicas * 16, 4096));
    KvEventBatch[] batches = new KvEventBatch[ring];
    int blockEvents = nextBatches(batches, streams, shared, capacity);
    // Apply the ring over and over for `seconds` of CPU (the ring's later passes re-store what the
    // stream would have: each replica's seq moves on, so the ring is rebuilt when it runs out).
    long cpu = 0;
    long events = 0;
    long batchCount = 0;
    long budget = (long) (seconds * 1e9);
    while (cpu < budget) {
      long t0 = MX.getCurrentThreadCpuTime();
      for (KvEventBatch b : batches) {
        tracker.apply(b);
      }
      cpu += MX.getCurrentThreadCpuTime() - t0;
      events += blockEvents;
      batchCount += ring;
      blockEvents = nextBatches(batches, streams, shared, capacity);
    }
    Reference.reachabilityFence(tracker);
    Reference.reachabilityFence(streams);
    System.out.printf(
        Locale.ROOT,
        "| %d | %d | %d | %.1f | %.1f | %.1f | %.2f M | %.0f k |%n",
        replicas,
        stats.indexHoldings(),
        stats.indexBlocks(),
        perHolding,
        perBlock,
        estimate,
        events / (cpu / 1e9) / 1e6,
        batchCount / (cpu / 1e9) / 1e3);
  }

  /** Fills {@code batches} with the streams' next batches, in turn; returns their block events. */
  private static int nextBatches(
      KvEventBatch[] batches, Stream[] streams, long[][] shared, int capacity) {
    int blockEvents = 0;
    for (int i = 0; i < batches.length; i++) {
      batches[i] = streams[i % streams.length].next(shared, capacity);
      for (KvEvent e : batches[i].events()) {
        blockEvents += e instanceof BlocksStored st ? st.blockKeys().length : RUN;
      }
    }
    return blockEvents;
  }

  /** What an agent spends per batch per ingress: the serializer both ways, CPU per batch. */
  private static void agent() {
    ActorSystem system =
        ActorSystem.create(
            "bench",
            ConfigFactory.parseString(
                    "pekko.actor.provider = local\npekko.fail-mixed-versions = off")
                .withFallback(ConfigFactory.load()));
    try {
      Serialization serialization = SerializationExtension.get(system);
      Stream stream = new Stream(0);
      long[][] shared = sharedRuns();
      int capacity = 8192;
      for (int i = 0; i < capacity / RUN; i++) {
        stream.next(shared, capacity);
      }
      KvEventBatch[] batches = new KvEventBatch[4096];
      for (int i = 0; i < batches.length; i++) {
        batches[i] = stream.next(shared, capacity);
      }
      Serializer serializer = serialization.findSerializerFor(batches[0]);
      byte[][] wire = new byte[batches.length][];
      long bytes = 0;
      long toCpu = 0;
      long fromCpu = 0;
      long n = 0;
      for (int round = 0; round < 60; round++) {
        long t0 = MX.getCurrentThreadCpuTime();
        for (int i = 0; i < batches.length; i++) {
          wire[i] = serializer.toBinary(batches[i]);
        }
        long t1 = MX.getCurrentThreadCpuTime();
        for (byte[] w : wire) {
          if (serializer.fromBinary(w) == null) {
            throw new IllegalStateException("nothing decoded");
          }
        }
        long t2 = MX.getCurrentThreadCpuTime();
        if (round >= 20) {
          toCpu += t1 - t0;
          fromCpu += t2 - t1;
          n += batches.length;
          for (byte[] w : wire) {
            bytes += w.length;
          }
        }
      }
      System.out.printf(
          Locale.ROOT,
          "%nAgent, per batch (a run of %d stored and %d removed, %s): %.0f bytes, serialize %.2f µs"
              + " CPU, deserialize on the ingress %.2f µs CPU.%n",
          RUN,
          RUN,
          serializer.getClass().getSimpleName(),
          bytes / (double) n,
          toCpu / 1e3 / n,
          fromCpu / 1e3 / n);
    } finally {
      system.terminate();
    }
  }
}
