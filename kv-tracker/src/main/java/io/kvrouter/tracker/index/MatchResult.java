package io.kvrouter.tracker.index;

import java.util.Arrays;

/**
 * What {@link PrefixIndex#match} found for one prompt: per replica, how many leading blocks of the
 * prompt it holds, and in which tier each of those blocks is best held.
 *
 * <p>For replica {@code r}, {@link #matched(int)} is the length of the longest run of leading
 * blocks that {@code r} holds in any tier (GPU, CPU, disk, or predicted); that run splits by the
 * best tier of each block (GPU, then predicted, then CPU, then disk) into {@link #gpu}, {@link
 * #predicted}, {@link #cpu} and {@link #disk}. {@link #gpuLeading(int)} is the run held on GPU by
 * confirmed engine events alone: the blocks a reservation need not predict.
 *
 * <p>A reusable scratch object: {@code match} resets it and touches only replicas that hold the
 * first block, so a match costs nothing per replica that holds nothing. Not thread-safe.
 *
 * <p>Implementation notes: one {@code int} array with a stride of 8 per replica (a replica's
 * counters share a cache line; 64 KB at the 2,048-replica limit) plus a list of touched replicas
 * for O(touched) reset.
 */
public final class MatchResult {

  private static final int MATCHED = 0;
  private static final int GPU = 1;
  private static final int PREDICTED = 2;
  private static final int CPU = 3;
  private static final int DISK = 4;
  private static final int GPU_LEADING = 5;
  private static final int COVERED_UNTIL = 6;
  private static final int FULL_MATCH = 7;
  private static final int STRIDE = 8;

  private final int[] counts = new int[PrefixIndex.MAX_REPLICAS * STRIDE];
  private final int[] touched = new int[PrefixIndex.MAX_REPLICAS];
  private int touchedCount;
  private final int[] covering = new int[PrefixIndex.MAX_REPLICAS];
  private int coveringCount;
  private final int[] alive = new int[PrefixIndex.MAX_REPLICAS];
  private int aliveCount = -1;
  private int promptBlocks;
  private int longest;
  private long[] heldBlocks = new long[0];

  /** Forgets the previous match. */
  public void reset(int promptBlocks) {
    for (int i = 0; i < touchedCount; i++) {
      java.util.Arrays.fill(counts, touched[i] * STRIDE, touched[i] * STRIDE + STRIDE, 0);
    }
    touchedCount = 0;
    coveringCount = 0;
    aliveCount = -1;
    this.promptBlocks = promptBlocks;
    this.longest = 0;
  }

  /** Blocks in the prompt that was matched. */
  public int promptBlocks() {
    return promptBlocks;
  }

  /** The longest {@link #matched} over all replicas. */
  public int longest() {
    return longest;
  }

  public int matched(int replica) {
    return counts[replica * STRIDE + MATCHED];
  }

  public int gpu(int replica) {
    return counts[replica * STRIDE + GPU];
  }

  public int predicted(int replica) {
    return counts[replica * STRIDE + PREDICTED];
  }

  public int cpu(int replica) {
    return counts[replica * STRIDE + CPU];
  }

  public int disk(int replica) {
    return counts[replica * STRIDE + DISK];
  }

  /**
   * A hybrid model's full-attention match before {@link #truncate} shrank it to what its
   * sliding-window group can reuse; {@link #matched} when it was not shrunk.
   */
  public int fullAttentionMatched(int replica) {
    return Math.max(counts[replica * STRIDE + FULL_MATCH], matched(replica));
  }

  /**
   * Shrinks {@code replica}'s match to its first {@code blocks} blocks (a hybrid model's
   * sliding-window group lacks the window beyond them, see {@link SlidingWindowHit}); does nothing
   * when it matched no more. The match does not record each block's tier by position, so the cut
   * blocks are taken from the weakest tiers first (disk, CPU, predicted, then GPU): exact for a
   * GPU-only replica, an approximation otherwise. O(touched replicas).
   */
  public void truncate(int replica, int blocks) {
    cut(replica, blocks, true);
  }

  /**
   * Shrinks {@code replica}'s match to the first {@code blocks} blocks its engine reuses of those
   * it holds (vLLM with EAGLE-style speculative decoding recomputes the last matched block), as
   * {@link #truncate} does but without calling the hit partial: the engine reuses all it can.
   */
  public void creditOnly(int replica, int blocks) {
    cut(replica, blocks, false);
  }

  private void cut(int replica, int blocks, boolean partial) {
    int base = replica * STRIDE;
    int m = counts[base + MATCHED];
    if (blocks >= m) {
      return;
    }
    if (partial) {
      counts[base + FULL_MATCH] = Math.max(counts[base + FULL_MATCH], m);
    }
    int cut = m - blocks;
    for (int slot : new int[] {DISK, CPU, PREDICTED, GPU}) {
      int t = Math.min(cut, counts[base + slot]);
      counts[base + slot] -= t;
      cut -= t;
    }
    counts[base + MATCHED] = blocks;
    counts[base + GPU_LEADING] = Math.min(counts[base + GPU_LEADING], blocks);
    longest = 0;
    for (int i = 0; i < touchedCount; i++) {
      longest = Math.max(longest, counts[touched[i] * STRIDE + MATCHED]);
    }
  }

  /**
   * Forgets {@code replica}'s match, as if it held none of the prompt: for a replica whose index is
   * not trusted (its blocks do not line up with the router's keys), so no policy credits it with a
   * cache hit. O(touched replicas).
   */
  public void distrust(int replica) {
    int base = replica * STRIDE;
    if (counts[base + MATCHED] == 0 && counts[base + FULL_MATCH] == 0) {
      return;
    }
    Arrays.fill(counts, base, base + STRIDE, 0);
    longest = 0;
    for (int i = 0; i < touchedCount; i++) {
      longest = Math.max(longest, counts[touched[i] * STRIDE + MATCHED]);
    }
  }

  public int gpuLeading(int replica) {
    return counts[replica * STRIDE + GPU_LEADING];
  }

  /**
   * The matched run of {@code replica} in GPU-block equivalents: each block of the run weighed by
   * the tier it is best held in ({@link TierWeights}), so a run reloaded from host memory or disk
   * counts for less than the same run on GPU. Allocation-free.
   */
  public double credited(int replica, TierWeights weights) {
    int base = replica * STRIDE;
    return weights.gpu() * counts[base + GPU]
        + weights.predicted() * counts[base + PREDICTED]
        + weights.cpu() * counts[base + CPU]
        + weights.disk() * counts[base + DISK];
  }

  /**
   * Blocks {@code replica} held by engine events (one per block and tier) when the match was made:
   * the size of its tree, for policies that break ties by it (Dynamo). Predicted entries are not
   * counted.
   */
  public long blocksHeld(int replica) {
    return replica < heldBlocks.length ? heldBlocks[replica] : 0;
  }

  /** The index's live per-replica block counts (read-only here); set by each match. */
  void heldBlocks(long[] counts) {
    this.heldBlocks = counts;
  }

  /** Replicas holding at least the first block, in no particular order. */
  public int[] holders() {
    return Arrays.copyOf(touched, touchedCount);
  }

  /**
   * How many replicas have matched exactly {@code block} blocks, listed by {@link #alive(int)}.
   * Calls must come with non-decreasing {@code block} within one match: a replica that fell behind
   * never catches up, so each call filters the previous list (the first starts from the replicas
   * holding the first block). O(replicas still listed).
   */
  int aliveAt(int block) {
    int[] from = aliveCount < 0 ? touched : alive;
    int n = aliveCount < 0 ? touchedCount : aliveCount;
    int kept = 0;
    for (int i = 0; i < n; i++) {
      int replica = from[i];
      if (counts[replica * STRIDE + MATCHED] == block) {
        alive[kept++] = replica;
      }
    }
    aliveCount = kept;
    return kept;
  }

  /** The {@code i}-th replica of the last {@link #aliveAt} list. */
  int alive(int i) {
    return alive[i];
  }

  /**
   * A predicted run of {@code replica} covers the prompt's blocks up to (excluding) {@code until}.
   */
  void cover(int replica, int until) {
    int base = replica * STRIDE;
    if (until > counts[base + COVERED_UNTIL]) {
      if (counts[base + COVERED_UNTIL] <= counts[base + MATCHED]) {
        covering[coveringCount++] = replica;
      }
      counts[base + COVERED_UNTIL] = until;
    }
  }

  /**
   * Extends every replica a predicted run covers at {@code block}; returns true if any extended.
   * Drops replicas whose cover ends here or that left the run.
   */
  boolean extendCovered(int block) {
    boolean any = false;
    int kept = 0;
    for (int i = 0; i < coveringCount; i++) {
      int replica = covering[i];
      any |= extend(replica, block, 0);
      int base = replica * STRIDE;
      if (counts[base + MATCHED] == block + 1 && counts[base + COVERED_UNTIL] > block + 1) {
        covering[kept++] = replica;
      }
    }
    coveringCount = kept;
    return any;
  }

  /** True while some replica is covered by a predicted run at the current block. */
  boolean anyCovering() {
    return coveringCount > 0;
  }

  /**
   * {@link #extend} for every block of {@code [from, to)} at once, for a replica that holds them
   * all with {@code mask} and that no predicted run covers: does nothing unless the replica has
   * matched up to {@code from} ({@code from > 0}).
   */
  void extendRun(int replica, int from, int to, int mask) {
    int base = replica * STRIDE;
    int[] c = counts;
    if (c[base + MATCHED] != from) {
      return;
    }
    int n = to - from;
    c[base + MATCHED] = to;
    if ((mask & PrefixIndex.GPU_BIT) != 0) {
      c[base + GPU] += n;
      if (c[base + GPU_LEADING] == from) {
        c[base + GPU_LEADING] = to;
      }
    } else if ((mask & PrefixIndex.CPU_BIT) != 0) {
      c[base + CPU] += n;
    } else {
      c[base + DISK] += n;
    }
    if (to > longest) {
      longest = to;
    }
  }

  /**
   * Records that {@code replica} holds block {@code block} with tier bits {@code mask}; returns
   * true when that extends its leading run.
   */
  boolean extend(int replica, int block, int mask) {
    int base = replica * STRIDE;
    int[] c = counts;
    if (c[base + MATCHED] != block) {
      return false;
    }
    if (c[base + COVERED_UNTIL] > block) {
      mask |= PrefixIndex.PREDICTED_BIT;
    }
    if (block == 0) {
      touched[touchedCount++] = replica;
    }
    c[base + MATCHED] = block + 1;
    if ((mask & PrefixIndex.GPU_BIT) != 0) {
      c[base + GPU]++;
      if (c[base + GPU_LEADING] == block) {
        c[base + GPU_LEADING] = block + 1;
      }
    } else if ((mask & PrefixIndex.PREDICTED_BIT) != 0) {
      c[base + PREDICTED]++;
    } else if ((mask & PrefixIndex.CPU_BIT) != 0) {
      c[base + CPU]++;
    } else {
      c[base + DISK]++;
    }
    if (block + 1 > longest) {
      longest = block + 1;
    }
    return true;
  }
}
