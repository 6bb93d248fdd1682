package io.kvrouter.tracker.bench;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.TrackerConfig;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Builds the benchmark cluster: {@code replicas} replicas of one model and an index holding {@code
 * sequences × blocksPerSequence} blocks, each sequence cached on one replica, plus a 64-block
 * system prompt shared by all sequences and cached on every replica (so the benchmark also
 * exercises nodes with many holders).
 */
final class ClusterFixture {

  static final String MODEL = "bench-model";
  static final int BLOCK_SIZE = 16;
  static final int SHARED_BLOCKS = 64;

  final KvTrackerCore tracker;
  final long[][] sequences;
  final int replicas;

  ClusterFixture(int replicas, int sequences, int blocksPerSequence, long seed) {
    this.replicas = replicas;
    TrackerConfig base =
        TrackerConfig.defaults("bench-ingress")
            .withExpectedBlocks(sequences * blocksPerSequence + SHARED_BLOCKS);
    // Predicted entries live 10 ms; benchmarks advance the clock 1 ms per decision, so each
    // decision's new blocks are inserted and, ten decisions later, expired: a stationary tree.
    TrackerConfig config =
        new TrackerConfig(
            base.ingressId(),
            base.policy(),
            base.busy(),
            seed,
            base.leaseMillis(),
            10,
            10,
            base.expectedBlocks());
    tracker = new KvTrackerCore(config);
    for (int r = 0; r < replicas; r++) {
      tracker.replicaUp(
          new ReplicaInfo(
              "replica-" + r,
              0,
              MODEL,
              "http://r" + r,
              BLOCK_SIZE,
              List.of(Tier.GPU),
              "both",
              true,
              true));
    }
    SplittableRandom rnd = new SplittableRandom(seed);
    long[] shared = new long[SHARED_BLOCKS];
    for (int i = 0; i < SHARED_BLOCKS; i++) {
      shared[i] = rnd.nextLong() | 1;
    }
    long[] seqNo = new long[replicas];
    for (int r = 0; r < replicas; r++) {
      store(r, seqNo[r]++, shared, 0, SHARED_BLOCKS);
    }
    this.sequences = new long[sequences][blocksPerSequence];
    for (int s = 0; s < sequences; s++) {
      long[] seq = this.sequences[s];
      System.arraycopy(shared, 0, seq, 0, SHARED_BLOCKS);
      for (int i = SHARED_BLOCKS; i < blocksPerSequence; i++) {
        seq[i] = rnd.nextLong() | 1;
      }
      int r = s % replicas;
      for (int from = SHARED_BLOCKS; from < blocksPerSequence; from += 256) {
        store(r, seqNo[r]++, seq, from, Math.min(blocksPerSequence, from + 256));
      }
    }
  }

  private void store(int replica, long seq, long[] keys, int from, int to) {
    long[] k = java.util.Arrays.copyOfRange(keys, from, to);
    long[] h = new long[k.length];
    for (int i = 0; i < k.length; i++) {
      h[i] = k[i] * 0x9E3779B97F4A7C15L + replica;
    }
    tracker.apply(
        new KvEventBatch(
            "replica-" + replica,
            1,
            seq,
            new KvEvent[] {
              new BlocksStored(from == 0 ? BlocksStored.ROOT : keys[from - 1], h, k, Tier.GPU)
            }));
  }

  /**
   * A prompt of {@code blocks} blocks whose first three quarters follow sequence {@code s} (cached
   * on one replica) and whose rest is new.
   */
  long[] prompt(int s, int blocks, long salt) {
    long[] seq = sequences[s % sequences.length];
    long[] p = new long[blocks];
    int cached = Math.min(seq.length, blocks * 3 / 4);
    System.arraycopy(seq, 0, p, 0, cached);
    SplittableRandom rnd = new SplittableRandom(salt);
    for (int i = cached; i < blocks; i++) {
      p[i] = rnd.nextLong() | 1;
    }
    return p;
  }
}
