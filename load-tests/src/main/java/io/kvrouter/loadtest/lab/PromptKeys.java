package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.PromptTokens;
import io.kvrouter.loadtest.workload.TokenExpander;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
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
 *
 * <p>A request that names a LoRA adapter ({@link LabAdapters}) is keyed with it on every block
 * ({@link ExtraKeys#of}), as vLLM hashes an adapter's blocks and the ingress keys its requests: its
 * keys equal {@code BlockKeys.keys(tokens, ExtraKeys.of(adapter, null))}.
 */
public final class PromptKeys {

  private final BlockKeys blockKeys;
  private final long[][] keys;
  private final String[] adapters;

  private PromptKeys(BlockKeys blockKeys, long[][] keys, String[] adapters) {
    this.blockKeys = blockKeys;
    this.keys = keys;
    this.adapters = adapters.clone();
  }

  /** Keys of every request of {@code workload} for {@code model} at {@code blockSize}. */
  public static PromptKeys compute(Workload workload, String model, int blockSize) {
    return compute(workload, model, blockSize, new String[workload.size()]);
  }

  /**
   * Keys of every request of {@code workload}, request i keyed with the LoRA adapter {@code
   * adapters[i]} (null for the base model).
   */
  public static PromptKeys compute(
      Workload workload, String model, int blockSize, String[] adapters) {
    BlockKeys bk = BlockKeys.of(model, blockSize);
    long[][] out = new long[workload.size()][];
    int bt = workload.blockTokens();
    if (bt > 0 && bt % blockSize == 0) {
      TokenExpander expander = new TokenExpander(workload.seed());
      Map<String, Map<Long, long[]>> memo = new HashMap<>();
      int[] tokens = new int[bt];
      for (int i = 0; i < out.length; i++) {
        String adapter = adapters[i];
        out[i] =
            traceKeys(
                bk,
                expander,
                memo.computeIfAbsent(adapter == null ? "" : adapter, a -> new HashMap<>()),
                tokens,
                workload.get(i),
                adapter == null ? 0L : ExtraKeys.of(adapter, null).blockExtra(0, blockSize));
      }
    } else {
      computeDirect(workload, bk, adapters, out);
    }
    return new PromptKeys(bk, out, adapters);
  }

  /** {@code extra}: the adapter's extra key, the same on every block (0 for none). */
  private static long[] traceKeys(
      BlockKeys bk,
      TokenExpander expander,
      Map<Long, long[]> memo,
      int[] tokens,
      WorkloadRequest r,
      long extra) {
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
          parent = bk.chain(parent, tokens, b * bs, extra);
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

  private static void computeDirect(
      Workload workload, BlockKeys bk, String[] adapters, long[][] out) {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<?>[] parts = new Future<?>[2];
      for (int t = 0; t < 2; t++) {
        int start = t;
        parts[t] =
            pool.submit(
                () -> {
                  for (int i = start; i < out.length; i += 2) {
                    out[i] =
                        bk.keys(
                            workload.get(i).promptTokenIds(),
                            adapters[i] == null ? ExtraKeys.NONE : ExtraKeys.of(adapters[i], null));
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

  /** The LoRA adapter request {@code i} names, or null for the base model. */
  public String adapter(int i) {
    return adapters[i];
  }

  /** Number of requests. */
  public int size() {
    return keys.length;
  }
}
