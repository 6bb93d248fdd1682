package io.kvrouter.tracker.bench;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.Tier;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Event apply throughput in block events per second: each invocation applies one batch storing 16
 * new blocks on a replica and one batch removing them again (32 block events), through the
 * tracker's sequencer, on a tree of about 1M blocks over 8 replicas. With {@code claimed}, every
 * cached sequence was matched twice first, so the run summary holds claims over the whole tree and
 * each GPU block removed is looked up in it (the state of a tracker that has been routing).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class EventApplyBenchmark {

  private static final int RUN = 16;
  private static final int RING = 4096;

  @Param({"false", "true"})
  public boolean claimed;

  private ClusterFixture cluster;
  private KvEvent[] stores;
  private KvEvent[] removes;
  private long[] seq;
  private int next;

  @Setup(Level.Trial)
  public void build() {
    cluster = new ClusterFixture(8, 128, 8192, 7);
    if (claimed) {
      io.kvrouter.tracker.index.MatchResult m = new io.kvrouter.tracker.index.MatchResult();
      for (long[] sequence : cluster.sequences) {
        cluster.tracker.match(sequence, sequence.length, m);
        cluster.tracker.match(sequence, sequence.length, m);
      }
    }
    stores = new KvEvent[RING];
    removes = new KvEvent[RING];
    SplittableRandom rnd = new SplittableRandom(99);
    for (int i = 0; i < RING; i++) {
      long[] keys = new long[RUN];
      long[] hashes = new long[RUN];
      for (int j = 0; j < RUN; j++) {
        keys[j] = rnd.nextLong() | 1;
        hashes[j] = rnd.nextLong();
      }
      stores[i] = new BlocksStored(BlocksStored.ROOT, hashes, keys, Tier.GPU);
      removes[i] = new BlocksRemoved(hashes, Tier.GPU);
    }
    seq = new long[8];
    for (int r = 0; r < 8; r++) {
      seq[r] = cluster.tracker.digests().replicas().get("replica-" + r).seq() + 1;
    }
  }

  @Benchmark
  @OperationsPerInvocation(2 * RUN)
  public void storeThenRemove16Blocks() {
    int i = next;
    next = (next + 1) & (RING - 1);
    int r = i & 7;
    String replica = "replica-" + r;
    cluster.tracker.apply(new KvEventBatch(replica, 1, seq[r]++, new KvEvent[] {stores[i]}));
    cluster.tracker.apply(new KvEventBatch(replica, 1, seq[r]++, new KvEvent[] {removes[i]}));
  }
}
