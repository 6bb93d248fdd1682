package io.kvrouter.tracker.bench;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.index.PrefixIndex;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.util.SplittableRandom;

/**
 * Retained heap bytes per indexed block: used heap after full GCs, before and after building an
 * index of {@code blocks} blocks (each held by one of 8 replicas, through the engine-hash bridge,
 * stored in runs of 16 as engines announce them), divided by the block count. The index stays
 * reachable until after the second measurement.
 */
final class HeapPerBlock {

  private HeapPerBlock() {}

  static long usedAfterGc() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  /** Returns {bytes per block, nodes}. */
  static double[] measure(int blocks, boolean presized) {
    SplittableRandom rnd = new SplittableRandom(1);
    long[][] keys = new long[blocks / 16][16];
    long[][] hashes = new long[blocks / 16][16];
    for (int i = 0; i < keys.length; i++) {
      for (int j = 0; j < 16; j++) {
        keys[i][j] = rnd.nextLong() | 1;
        hashes[i][j] = rnd.nextLong();
      }
    }
    long before = usedAfterGc();
    PrefixIndex index = presized ? new PrefixIndex(blocks) : new PrefixIndex();
    for (int i = 0; i < keys.length; i++) {
      index.store(i & 7, new BlocksStored(BlocksStored.ROOT, hashes[i], keys[i], Tier.GPU));
    }
    long after = usedAfterGc();
    // The inputs must stay reachable until after the second measurement, or a compiled frame may
    // drop them early and the difference would undercount the index by their size.
    Reference.reachabilityFence(keys);
    Reference.reachabilityFence(hashes);
    Reference.reachabilityFence(index);
    double perBlock = (after - before) / (double) blocks;
    return new double[] {perBlock, index.nodes()};
  }
}
