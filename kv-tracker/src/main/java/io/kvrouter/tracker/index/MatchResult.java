package io.kvrouter.tracker.index;

import java.util.Arrays;

/**
 * What {@link PrefixIndex#match} found for one prompt: per replica, how many leading blocks of
 * the prompt it holds, and in which tier each of those blocks is best held.
 *
 * <p>For replica {@code r}, {@link #matched(int)} is the length of the longest run of leading
 * blocks that {@code r} holds in any tier (GPU, CPU, disk, or predicted); that run splits by the
 * best tier of each block (GPU, then predicted, then CPU, then disk) into {@link #gpu},
 * {@link #predicted}, {@link #cpu} and {@link #disk}. {@link #gpuLeading(int)} is the run held
 * on GPU by confirmed engine events alone: the blocks a reservation need not predict.
 *
 * <p>A reusable scratch object: {@code match} resets it and touches only replicas that hold the
 * first block, so a match costs nothing per replica that holds nothing. Not thread-safe.
 *
 * <p>Implementation notes: dense {@code int} arrays indexed by replica index (8 KB each at the
 * 2,048-replica limit) plus a list of touched replicas for O(touched) reset.
 */
public final class MatchResult {

  private final int[] matched = new int[PrefixIndex.MAX_REPLICAS];
  private final int[] gpu = new int[PrefixIndex.MAX_REPLICAS];
  private final int[] predicted = new int[PrefixIndex.MAX_REPLICAS];
  private final int[] cpu = new int[PrefixIndex.MAX_REPLICAS];
  private final int[] disk = new int[PrefixIndex.MAX_REPLICAS];
  private final int[] gpuLeading = new int[PrefixIndex.MAX_REPLICAS];
  private final int[] touched = new int[PrefixIndex.MAX_REPLICAS];
  private int touchedCount;
  private int promptBlocks;
  private int longest;

  /** Forgets the previous match. */
  public void reset(int promptBlocks) {
    for (int i = 0; i < touchedCount; i++) {
      int r = touched[i];
      matched[r] = 0;
      gpu[r] = 0;
      predicted[r] = 0;
      cpu[r] = 0;
      disk[r] = 0;
      gpuLeading[r] = 0;
    }
    touchedCount = 0;
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
    return matched[replica];
  }

  public int gpu(int replica) {
    return gpu[replica];
  }

  public int predicted(int replica) {
    return predicted[replica];
  }

  public int cpu(int replica) {
    return cpu[replica];
  }

  public int disk(int replica) {
    return disk[replica];
  }

  public int gpuLeading(int replica) {
    return gpuLeading[replica];
  }

  /** Replicas holding at least the first block, in no particular order. */
  public int[] holders() {
    return Arrays.copyOf(touched, touchedCount);
  }

  /**
   * Records that {@code replica} holds block {@code block} with tier bits {@code mask}; returns
   * true when that extends its leading run.
   */
  boolean extend(int replica, int block, int mask) {
    if (matched[replica] != block) {
      return false;
    }
    if (block == 0) {
      touched[touchedCount++] = replica;
    }
    matched[replica] = block + 1;
    if ((mask & PrefixIndex.GPU_BIT) != 0) {
      gpu[replica]++;
      if (gpuLeading[replica] == block) {
        gpuLeading[replica] = block + 1;
      }
    } else if ((mask & PrefixIndex.PREDICTED_BIT) != 0) {
      predicted[replica]++;
    } else if ((mask & PrefixIndex.CPU_BIT) != 0) {
      cpu[replica]++;
    } else {
      disk[replica]++;
    }
    if (block + 1 > longest) {
      longest = block + 1;
    }
    return true;
  }
}
