package io.kvrouter.loadtest.bench;

import java.util.SplittableRandom;

/**
 * Deterministic pseudo-words for synthetic prompts: lower-case consonant-vowel syllables, two to
 * four per word, separated by single spaces. The same seed always gives the same text, on every JVM
 * ({@link SplittableRandom} is specified bit for bit).
 *
 * <p>Words made of syllables rather than random letters tokenize into a few tokens each with common
 * BPE vocabularies, so prompt lengths in tokens stay roughly proportional to the word count (about
 * two to three tokens per word). Cost: O(words) time, one string.
 */
public final class PseudoWords {

  private static final String[] CONSONANTS = {
    "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "ch", "sh", "th"
  };
  private static final String[] VOWELS = {"a", "e", "i", "o", "u", "ai", "ou"};

  private PseudoWords() {}

  /** {@code count} words drawn from a generator seeded with {@code seed}. */
  public static String words(long seed, int count) {
    return words(new SplittableRandom(seed), count);
  }

  /** {@code count} words drawn from {@code random} (advances it). */
  public static String words(SplittableRandom random, int count) {
    if (count < 0) {
      throw new IllegalArgumentException("word count must be >= 0, got " + count);
    }
    StringBuilder sb = new StringBuilder(count * 8);
    for (int w = 0; w < count; w++) {
      if (w > 0) {
        sb.append(' ');
      }
      int syllables = 2 + random.nextInt(3);
      for (int s = 0; s < syllables; s++) {
        sb.append(CONSONANTS[random.nextInt(CONSONANTS.length)]);
        sb.append(VOWELS[random.nextInt(VOWELS.length)]);
      }
    }
    return sb.toString();
  }

  /** A seed for sub-stream {@code a, b} of {@code seed} (SplitMix64 finalizer over the mix). */
  static long mix(long seed, long a, long b) {
    long z = seed + 0x9E3779B97F4A7C15L * (a + 1) + 0xC2B2AE3D27D4EB4FL * (b + 1);
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
