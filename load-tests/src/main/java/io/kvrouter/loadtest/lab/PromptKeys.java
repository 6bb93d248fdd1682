package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.PromptTokens;
import io.kvrouter.loadtest.workload.TokenExpander;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.protocol.keys.BlockKeys;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The router block keys of every prompt of a workload, computed once per lab run with kv-tracker's
 * {@link BlockKeys} (the one definition of a router key, used both for the prompt the router sees
 * and for the blocks the engine announces) and shared read-only by every policy.
 *
 * <p>For a Mooncake trace (trace block ids chained, {@code blockTokens} a multiple of the block
 * size) the keys of a full trace block depend only on its id (the id stands for the block and
 * everything before it, and its tokens are a function of the id), so they are computed once per
 * distinct id and reused: the conversation trace hashes about 6 M tokens instead of 145 M. The
 * truncated last block of a prompt is hashed from its tokens. Result: exactly {@code
 * BlockKeys.keys(request.promptTokenIds())} (a test checks it).
 *
 * <p>Cost: O(distinct tokens) hashing, 8 bytes per prompt block held (the conversation trace at
 * 16-token blocks: 9 M keys, 72 MB). Immutable after construction; thread-safe to read.
 */
public final class PromptKeys {

  private final BlockKeys blockKeys;
  private final long[][] keys;

  private PromptKeys(BlockKeys blockKeys, long[][] keys) {
    this.blockKeys = blockKeys;
    this.keys = keys;
  }

  /** Keys of every request of {@code workload} for {@code model} at {@code blockSize}. */
  public static PromptKeys compute(Workload workload, String model, int blockSize) {
    BlockKeys bk = BlockKeys.of(model, blockSize);
    long[][] out = new long[workload.size()][];
    int bt = workload.blockTokens();
    if (bt > 0 && bt % blockSize == 0) {
      TokenExpander expander = new TokenExpander(workload.seed());
      Map<Long, long[]> memo = new HashMap<>();
      int[] tokens = new int[bt];
      for (int i = 0; i < out.length; i++) {
        out[i] = traceKeys(bk, expander, memo, tokens, workload.get(i));
      }
    } else {
      computeDirect(workload, bk, out);
    }
    return new PromptKeys(bk, out);
  }

  private static long[] traceKeys(
      BlockKeys bk,
      TokenExpander expander,
      Map<Long, long[]> memo,
      int[] tokens,
      WorkloadRequest r) {
    PromptTokens p = r.prompt();
    int bs = bk.blockSize();
    long[] out = new long[r.inputLength() / bs];
    int filled = 0;
    long parent = BlockKeys.ROOT;
    for (int s = 0; s < p.segmentCount(); s++) {
      long id = p.segmentKey(s);
      int len = p.segmentLength(s);
      long[] segKeys = len == tokens.length ? memo.get(id) : null;
      if (segKeys == null) {
        expander.fill(id, len, tokens, 0);
        segKeys = new long[len / bs];
        for (int b = 0; b < segKeys.length; b++) {
          parent = bk.chain(parent, tokens, b * bs, 0L);
          segKeys[b] = parent;
        }
        if (len == tokens.length) {
          memo.put(id, segKeys);
        }
      }
      System.arraycopy(segKeys, 0, out, filled, segKeys.length);
      filled += segKeys.length;
      if (segKeys.length > 0) {
        parent = segKeys[segKeys.length - 1];
      }
    }
    return out;
  }

  private static void computeDirect(Workload workload, BlockKeys bk, long[][] out) {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<?>[] parts = new Future<?>[2];
      for (int t = 0; t < 2; t++) {
        int start = t;
        parts[t] =
            pool.submit(
                () -> {
                  for (int i = start; i < out.length; i += 2) {
                    out[i] = bk.keys(workload.get(i).promptTokenIds());
                  }
                });
      }
      for (Future<?> f : parts) {
        f.get();
      }
    } catch (Exception e) {
      throw new IllegalStateException("computing prompt keys failed", e);
    } finally {
      pool.shutdown();
    }
  }

  /** The key function. */
  public BlockKeys blockKeys() {
    return blockKeys;
  }

  /** Keys of request {@code i} (do not mutate). */
  public long[] of(int i) {
    return keys[i];
  }

  /** Number of requests. */
  public int size() {
    return keys.length;
  }
}
