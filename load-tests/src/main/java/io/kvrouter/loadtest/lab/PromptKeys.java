package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.PromptTokens;
import io.kvrouter.loadtest.workload.TokenExpander;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.protocol.keys.MediaPrompt;
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
 *
 * <p>A request that shows an image ({@link LabAdapters#images}; trace workloads only) holds {@code
 * imageTokens} more prompt tokens: the image's placeholder tokens (Qwen2-VL's {@code
 * <|image_pad|>}, {@code MediaPrompt.Settings.DEFAULTS}), right after the full blocks of the
 * prompt's first trace block (the system prompt every conversation of the Mooncake trace shares;
 * the image opens the user content, where vLLM puts it). The blocks they overlap are keyed with the
 * image as the engine and the ingress key them ({@link ExtraKeys#withMedia}(identifier, start,
 * length), {@code MediaPrompt.withItems}); every later block chains on them. So two requests with
 * the same image share those blocks and what follows, two with different images share only the
 * blocks before it. {@link #textOf} gives the keys of the prompt without its image, what a router
 * sees that reads only a request's text parts: all images look alike to it (none is there).
 *
 * <p>A request that knows its answer ({@link WorkloadRequest#answered}; generated workloads only)
 * also has {@link #engineOf}: the keys of the full blocks of its prompt and answer, which the
 * engine registers as it generates them. Its prompt keys are their leading {@code inputLength /
 * blockSize} (the keys chain), so the tokens are hashed once.
 */
public final class PromptKeys {

  private final BlockKeys blockKeys;
  private final long[][] keys;
  private final String[] adapters;
  private final String[] images;
  private final int imageTokens;
  private final long[][] textKeys;
  private final long[][] engineKeys;

  private PromptKeys(
      BlockKeys blockKeys,
      long[][] keys,
      long[][] engineKeys,
      String[] adapters,
      String[] images,
      int imageTokens,
      long[][] textKeys) {
    this.blockKeys = blockKeys;
    this.keys = keys;
    this.engineKeys = engineKeys;
    this.adapters = adapters.clone();
    this.images = images.clone();
    this.imageTokens = imageTokens;
    this.textKeys = textKeys;
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
    return compute(workload, model, blockSize, adapters, new String[workload.size()], 0);
  }

  /**
   * Keys of every request of {@code workload}, request i keyed with the LoRA adapter {@code
   * adapters[i]} and showing the image {@code images[i]} of {@code imageTokens} placeholder tokens
   * (null: none).
   *
   * @throws IllegalArgumentException when a request shows an image and the workload is not a trace
   *     of whole blocks, or {@code imageTokens} is not a multiple of {@code blockSize}, or a
   *     request of a trace of whole blocks knows its answer
   */
  public static PromptKeys compute(
      Workload workload,
      String model,
      int blockSize,
      String[] adapters,
      String[] images,
      int imageTokens) {
    BlockKeys bk = BlockKeys.of(model, blockSize);
    long[][] out = new long[workload.size()][];
    long[][] text = out;
    int bt = workload.blockTokens();
    boolean anyImage = java.util.Arrays.stream(images).anyMatch(java.util.Objects::nonNull);
    if (anyImage && (bt <= 0 || bt % blockSize != 0 || imageTokens % blockSize != 0)) {
      throw new IllegalArgumentException(
          "images need a trace workload of whole blocks and image tokens a multiple of the block"
              + " size "
              + blockSize);
    }
    long[][] engine = out;
    if (bt > 0 && bt % blockSize == 0) {
      if (workload.requests().stream().anyMatch(r -> r.answered() != null)) {
        throw new IllegalArgumentException(
            "answers are keyed for generated workloads only, not for trace " + workload.name());
      }
      traceKeys(workload, bk, adapters, images, imageTokens, out);
      if (anyImage) {
        text = new long[out.length][];
        traceKeys(workload, bk, adapters, new String[out.length], 0, text);
      }
    } else {
      engine = new long[out.length][];
      computeDirect(workload, bk, adapters, out, engine);
    }
    return new PromptKeys(bk, out, engine, adapters, images, anyImage ? imageTokens : 0, text);
  }

  /** Fills {@code out}. */
  private static void traceKeys(
      Workload workload,
      BlockKeys bk,
      String[] adapters,
      String[] images,
      int imageTokens,
      long[][] out) {
    int bs = bk.blockSize();
    TokenExpander expander = new TokenExpander(workload.seed());
    Map<String, Map<Long, long[]>> memo = new HashMap<>();
    int[] tokens = new int[workload.blockTokens()];
    int[] placeholders = new int[imageTokens];
    java.util.Arrays.fill(placeholders, MediaPrompt.Settings.DEFAULTS.imageTokenId());
    for (int i = 0; i < out.length; i++) {
      String adapter = adapters[i];
      String image = images[i];
      ExtraKeys base = ExtraKeys.of(adapter, null);
      String group = (adapter == null ? "" : adapter) + '\u0000' + (image == null ? "" : image);
      out[i] =
          traceKeys(
              bk,
              expander,
              memo.computeIfAbsent(group, a -> new HashMap<>()),
              tokens,
              workload.get(i),
              base.blockExtra(0, bs),
              image == null ? null : placeholders,
              image,
              base);
    }
  }

  /**
   * {@code extra}: the adapter's extra key, the same on every block (0 for none); {@code
   * placeholders}: the image's tokens, inserted after the first segment's full blocks (null: no
   * image); {@code image}: its identifier, keyed into its blocks.
   */
  private static long[] traceKeys(
      BlockKeys bk,
      TokenExpander expander,
      Map<Long, long[]> memo,
      int[] tokens,
      WorkloadRequest r,
      long extra,
      int[] placeholders,
      String image,
      ExtraKeys base) {
    PromptTokens p = r.prompt();
    int bs = bk.blockSize();
    int imageLength = placeholders == null ? 0 : placeholders.length;
    long[] out = new long[(r.inputLength() + imageLength) / bs];
    int filled = 0;
    long parent = BlockKeys.ROOT;
    for (int s = 0; s < p.segmentCount(); s++) {
      if (s == 1 && placeholders != null) {
        parent = imageKeys(bk, parent, placeholders, image, base, filled, out);
        filled += imageLength / bs;
      }
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
    if (p.segmentCount() == 1 && placeholders != null) {
      imageKeys(bk, parent, placeholders, image, base, filled, out);
    }
    return out;
  }

  /**
   * Writes the keys of the image's blocks, the first at block {@code first}, into {@code out};
   * returns the last.
   */
  private static long imageKeys(
      BlockKeys bk,
      long parent,
      int[] placeholders,
      String image,
      ExtraKeys base,
      int first,
      long[] out) {
    int bs = bk.blockSize();
    ExtraKeys extras = base.withMedia(image, first * bs, placeholders.length);
    for (int b = 0; b < placeholders.length / bs; b++) {
      parent = bk.chain(parent, placeholders, b * bs, extras.blockExtra(first + b, bs));
      out[first + b] = parent;
    }
    return parent;
  }

  /**
   * Fills {@code out} with each request's prompt keys and {@code engine} with its prompt-and-answer
   * keys (the same array when the answer is unknown).
   */
  private static void computeDirect(
      Workload workload, BlockKeys bk, String[] adapters, long[][] out, long[][] engine) {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<?>[] parts = new Future<?>[2];
      for (int t = 0; t < 2; t++) {
        int start = t;
        parts[t] =
            pool.submit(
                () -> {
                  for (int i = start; i < out.length; i += 2) {
                    WorkloadRequest r = workload.get(i);
                    ExtraKeys extras =
                        adapters[i] == null ? ExtraKeys.NONE : ExtraKeys.of(adapters[i], null);
                    if (r.answered() == null) {
                      out[i] = bk.keys(r.promptTokenIds(), extras);
                      engine[i] = out[i];
                    } else {
                      engine[i] = bk.keys(r.answered().toArray(), extras);
                      out[i] = java.util.Arrays.copyOf(engine[i], bk.blockCount(r.inputLength()));
                    }
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

  /**
   * Keys of the blocks the engine caches for request {@code i}: its prompt's and, when the workload
   * knows the answer, those its answer fills ({@link #of} otherwise; do not mutate).
   */
  public long[] engineOf(int i) {
    return engineKeys[i];
  }

  /**
   * Keys of request {@code i} without its image, as a router sees them that reads only the
   * request's text ({@link #of} when no request shows an image; do not mutate).
   */
  public long[] textOf(int i) {
    return textKeys[i];
  }

  /** The image request {@code i} shows, or null. */
  public String image(int i) {
    return images[i];
  }

  /** Placeholder tokens request {@code i} holds besides its trace tokens (0 without an image). */
  public int imageTokens(int i) {
    return images[i] == null ? 0 : imageTokens;
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
