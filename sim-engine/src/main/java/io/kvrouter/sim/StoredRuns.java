package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;

/**
 * How a simulated cache group announces what it stores, as vLLM does: a sequence's newly full
 * blocks are taken in order, and each unbroken run of those that became cached (a block already
 * held stays anonymous and splits the run) is one {@link EngineEvent.BlockStored}, chained to the
 * block before it, with its tokens and its blocks' extra keys. {@link PagedKvCache} (group 0) and
 * {@link SlidingWindowGroup} (group 1) announce through it.
 *
 * <p>Cost: O(blocks) per call, one event per run. Stateless.
 */
final class StoredRuns {

  /** Receives one run {@code [from, to)} of newly stored blocks. */
  @FunctionalInterface
  interface Sink {
    void run(int from, int to);
  }

  private StoredRuns() {}

  /**
   * Takes blocks {@code from} to {@code to - 1} in order ({@code store} tells whether each became
   * stored now) and hands every maximal run of stored ones to {@code sink}.
   */
  static void each(int from, int to, IntPredicate store, Sink sink) {
    int runStart = -1;
    for (int i = from; i <= to; i++) {
      boolean fresh = i < to && store.test(i);
      if (fresh && runStart < 0) {
        runStart = i;
      } else if (!fresh && runStart >= 0) {
        sink.run(runStart, i);
        runStart = -1;
      }
    }
  }

  /**
   * The {@link EngineEvent.BlockStored} of blocks {@code [from, to)} of a sequence: their hashes,
   * the parent hash (none for the first block), their tokens ({@code tokens[i*blockSize,
   * (i+1)*blockSize)} for block i), the adapter, and {@code extraOf.apply(i)} as block i's {@code
   * extra_keys} (none when {@code extraOf} is null or gives only empty lists), in cache group
   * {@code group} of kind {@code kind} with {@code slidingWindow} tokens (0, null and 0 for the
   * only, full-attention group).
   */
  static EngineEvent.BlockStored event(
      long[] hashes,
      int[] tokens,
      int blockSize,
      int from,
      int to,
      String loraName,
      IntFunction<List<EngineEvent.ExtraKey>> extraOf,
      int group,
      String kind,
      int slidingWindow) {
    return new EngineEvent.BlockStored(
        Arrays.copyOfRange(hashes, from, to),
        from == 0 ? null : hashes[from - 1],
        Arrays.copyOfRange(tokens, from * blockSize, to * blockSize),
        blockSize,
        loraName,
        null,
        extraKeysOf(from, to, extraOf),
        group,
        kind,
        slidingWindow);
  }

  private static List<List<EngineEvent.ExtraKey>> extraKeysOf(
      int from, int to, IntFunction<List<EngineEvent.ExtraKey>> extraOf) {
    if (extraOf == null) {
      return null;
    }
    List<List<EngineEvent.ExtraKey>> extraKeys = new ArrayList<>(to - from);
    boolean any = false;
    for (int i = from; i < to; i++) {
      List<EngineEvent.ExtraKey> block = List.copyOf(extraOf.apply(i));
      any |= !block.isEmpty();
      extraKeys.add(block);
    }
    return any ? extraKeys : null;
  }
}
