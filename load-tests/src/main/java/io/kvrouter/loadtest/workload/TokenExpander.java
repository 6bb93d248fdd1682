package io.kvrouter.loadtest.workload;

/**
 * Expands a segment key (a Mooncake {@code hash_id}, or a key a generator derives for a shared
 * system prompt, a question, a chat turn) into synthetic token ids, deterministically.
 *
 * <p>Contract: token {@code j} of segment {@code key} is a pure function of {@code (seed, key, j)},
 * in {@code [0, VOCAB_SIZE)}. Hence two prompts whose segment keys agree from the start have equal
 * token prefixes, and truncating a segment to {@code n} tokens yields the first {@code n} tokens of
 * the full segment. Different keys give independent, uniformly distributed token streams: the
 * chance that two different segments agree on their first {@code k} tokens is {@code
 * VOCAB_SIZE^-k}, so two different prompts never share a full 16-token router block by accident
 * (about 10^-83). This follows the Mooncake guidance for replaying its traces (one 512-token block
 * per {@code hash_id}, ids chained, the last block truncated to {@code input_length};
 * kvcache-ai/Mooncake {@code FAST25-release/traces}).
 *
 * <p>Cost: a few nanoseconds and no allocation per token (two SplitMix64 finalisers); no state but
 * the seed, so instances are immutable and thread-safe.
 */
public final class TokenExpander {

  /**
   * Size of the synthetic vocabulary: ids fall in {@code [0, VOCAB_SIZE)}, like a Qwen/Llama-3
   * vocabulary.
   */
  public static final int VOCAB_SIZE = 150_000;

  private static final long GOLDEN = 0x9E3779B97F4A7C15L;

  private final long seed;
  private final long seedMix;

  /**
   * @param seed the workload seed; different seeds give unrelated token ids for the same keys
   */
  public TokenExpander(long seed) {
    this.seed = seed;
    this.seedMix = mix64(seed ^ 0x5DEECE66DL);
  }

  /** The seed this expander was built with. */
  public long seed() {
    return seed;
  }

  /** Token {@code position} (0-based) of segment {@code key}. */
  public int tokenAt(long key, int position) {
    return reduce(mix64(segmentBase(key) + (position + 1L) * GOLDEN));
  }

  /**
   * Writes the first {@code count} tokens of segment {@code key} into {@code dest} at {@code
   * offset}. Allocation-free.
   */
  public void fill(long key, int count, int[] dest, int offset) {
    long base = segmentBase(key);
    for (int j = 0; j < count; j++) {
      dest[offset + j] = reduce(mix64(base + (j + 1L) * GOLDEN));
    }
  }

  /** The first {@code count} tokens of segment {@code key} as a new array. */
  public int[] tokens(long key, int count) {
    int[] out = new int[count];
    fill(key, count, out, 0);
    return out;
  }

  private long segmentBase(long key) {
    return mix64(key * GOLDEN ^ seedMix);
  }

  /**
   * Maps a uniform 64-bit value onto {@code [0, VOCAB_SIZE)} by multiply-shift (no modulo bias
   * worth noting).
   */
  private static int reduce(long x) {
    return (int) (((x >>> 32) * VOCAB_SIZE) >>> 32);
  }

  /**
   * SplitMix64 finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
   * OOPSLA 2014): a bijective 64-bit mixer.
   */
  static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /**
   * Derives a segment key from a namespace and coordinates (for generators: the group, the prompt,
   * the session, the turn). Distinct inputs give distinct keys except with probability ~2^-64.
   */
  public static long key(long namespace, long... parts) {
    long h = mix64(namespace + GOLDEN);
    for (long p : parts) {
      h = mix64(h ^ mix64(p + GOLDEN));
    }
    return h;
  }
}
