package io.kvrouter.loadtest.workload;

import java.util.Arrays;

/**
 * A prompt held as a sequence of segments {@code (key, length)} whose token ids are produced on
 * demand by a {@link TokenExpander}; nothing is expanded until asked for.
 *
 * <p>Contract: immutable. {@link #toArray()} returns the concatenation of each segment's first
 * {@code length} tokens. Two prompts built with the same expander seed and the same leading
 * segments (same keys, same lengths) have equal token prefixes over those segments; the first
 * segment that differs in key starts a different token stream.
 *
 * <p>Cost: 12 bytes per segment (a Mooncake request of 100k tokens is ~200 segments, ~2.4 KB);
 * {@link #toArray()} allocates {@code 4 × length()} bytes and runs in O(length). {@link #extend}
 * copies the segment arrays, O(segments).
 */
public final class PromptTokens {

  private final TokenExpander expander;
  private final long[] keys;
  private final int[] lengths;
  private final int length;

  private PromptTokens(TokenExpander expander, long[] keys, int[] lengths) {
    this.expander = expander;
    this.keys = keys;
    this.lengths = lengths;
    long total = 0;
    for (int len : lengths) {
      if (len <= 0) {
        throw new IllegalArgumentException("segment length must be positive, got " + len);
      }
      total += len;
    }
    if (total > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("prompt too long: " + total + " tokens");
    }
    this.length = (int) total;
  }

  /** An empty prompt. */
  public static PromptTokens empty(TokenExpander expander) {
    return new PromptTokens(expander, new long[0], new int[0]);
  }

  /**
   * A prompt of the given segments. The arrays are copied.
   *
   * @throws IllegalArgumentException if the arrays differ in length or a segment length is not
   *     positive
   */
  public static PromptTokens of(TokenExpander expander, long[] keys, int[] lengths) {
    if (keys.length != lengths.length) {
      throw new IllegalArgumentException(
          "keys and lengths differ: " + keys.length + " vs " + lengths.length);
    }
    return new PromptTokens(expander, keys.clone(), lengths.clone());
  }

  /**
   * Mooncake layout: one segment of {@code blockTokens} tokens per hash id, the last one truncated
   * so the prompt has exactly {@code inputLength} tokens.
   *
   * @throws IllegalArgumentException unless {@code hashIds.length == ceil(inputLength /
   *     blockTokens)}
   */
  public static PromptTokens ofBlocks(
      TokenExpander expander, long[] hashIds, int inputLength, int blockTokens) {
    int expected = (int) ((inputLength + (long) blockTokens - 1) / blockTokens);
    if (hashIds.length != expected) {
      throw new IllegalArgumentException(
          "expected ceil("
              + inputLength
              + "/"
              + blockTokens
              + ") = "
              + expected
              + " hash ids, got "
              + hashIds.length);
    }
    int[] lengths = new int[hashIds.length];
    Arrays.fill(lengths, blockTokens);
    if (lengths.length > 0) {
      lengths[lengths.length - 1] = inputLength - (lengths.length - 1) * blockTokens;
    }
    return new PromptTokens(expander, hashIds.clone(), lengths);
  }

  /** This prompt followed by one more segment. */
  public PromptTokens extend(long key, int segmentLength) {
    long[] k = Arrays.copyOf(keys, keys.length + 1);
    int[] l = Arrays.copyOf(lengths, lengths.length + 1);
    k[keys.length] = key;
    l[lengths.length] = segmentLength;
    return new PromptTokens(expander, k, l);
  }

  /** Number of tokens. */
  public int length() {
    return length;
  }

  /** Number of segments. */
  public int segmentCount() {
    return keys.length;
  }

  /** Key of segment {@code i}. */
  public long segmentKey(int i) {
    return keys[i];
  }

  /** Length in tokens of segment {@code i}. */
  public int segmentLength(int i) {
    return lengths[i];
  }

  /** All token ids, freshly expanded into a new array. */
  public int[] toArray() {
    int[] out = new int[length];
    int offset = 0;
    for (int i = 0; i < keys.length; i++) {
      expander.fill(keys[i], lengths[i], out, offset);
      offset += lengths[i];
    }
    return out;
  }

  /** The first {@code n} token ids ({@code n <= length()}), expanding only the segments needed. */
  public int[] prefix(int n) {
    if (n < 0 || n > length) {
      throw new IllegalArgumentException("prefix length " + n + " outside [0, " + length + "]");
    }
    int[] out = new int[n];
    int offset = 0;
    for (int i = 0; i < keys.length && offset < n; i++) {
      int take = Math.min(lengths[i], n - offset);
      expander.fill(keys[i], take, out, offset);
      offset += take;
    }
    return out;
  }

  @Override
  public String toString() {
    return "PromptTokens[" + length + " tokens, " + keys.length + " segments]";
  }
}
