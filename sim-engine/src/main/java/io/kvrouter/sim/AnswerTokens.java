package io.kvrouter.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * The simulated model's answers: each output token is chosen, by a hash of the last {@value
 * #WINDOW} tokens of the sequence (prompt then output), from a small vocabulary of tokens whose
 * text the engine's tokenizer encodes back to the same ids, alone and one after another. An answer
 * therefore depends on its context only, not on the request's id or replica: an answer continued
 * elsewhere from its prompt and the text so far goes on exactly as the uncut one would, which makes
 * a migrated answer checkable against an uncut run of the same request.
 *
 * <p>Immutable and thread-safe.
 */
public final class AnswerTokens {

  /** Tokens of context the next token depends on. */
  static final int WINDOW = 8;

  /** The byte tokenizer's vocabulary: space and the lowercase letters. */
  public static final AnswerTokens LETTERS = letters();

  /**
   * Words to build a vocabulary from for a real tokenizer: common English words with a leading
   * space, most of which a BPE vocabulary holds as one token.
   */
  public static final List<String> WORDS =
      List.of(
          " red", " green", " blue", " black", " white", " brown", " gold", " gray", " one", " two",
          " three", " four", " five", " six", " seven", " ten", " cat", " dog", " bird", " fish",
          " tree", " river", " stone", " house", " road", " city", " water", " fire", " light",
          " day", " night", " time");

  private final int[] ids;

  private AnswerTokens(int[] ids) {
    if (ids.length < 2) {
      throw new IllegalArgumentException("an answer vocabulary needs two tokens at least");
    }
    this.ids = ids;
  }

  private static AnswerTokens letters() {
    int[] ids = new int[27];
    ids[0] = ' ';
    for (int i = 1; i < ids.length; i++) {
      ids[i] = 'a' + i - 1;
    }
    return new AnswerTokens(ids);
  }

  /**
   * The words of {@code candidates} that {@code encode} (a tokenizer adding no special tokens)
   * makes one token of, which {@code decode} turns back into the word, each kept only if it written
   * next to itself and to every word kept before it, either way round, encodes back to the two ids
   * (so an answer made of them round-trips through the tokenizer's text).
   *
   * @throws IllegalArgumentException when fewer than two words qualify
   */
  public static AnswerTokens fromWords(
      Function<String, int[]> encode, Function<int[], String> decode, List<String> candidates) {
    List<String> words = new ArrayList<>();
    List<Integer> ids = new ArrayList<>();
    for (String w : candidates) {
      int[] enc = encode.apply(w);
      if (enc.length == 1 && decode.apply(enc).equals(w) && !ids.contains(enc[0])) {
        words.add(w);
        ids.add(enc[0]);
      }
    }
    List<Integer> kept = new ArrayList<>();
    List<String> keptWords = new ArrayList<>();
    for (int i = 0; i < words.size(); i++) {
      keptWords.add(words.get(i));
      kept.add(ids.get(i));
      for (int j = 0; j < kept.size(); j++) {
        String w = keptWords.get(j);
        if (!Arrays.equals(encode.apply(words.get(i) + w), new int[] {ids.get(i), kept.get(j)})
            || !Arrays.equals(
                encode.apply(w + words.get(i)), new int[] {kept.get(j), ids.get(i)})) {
          keptWords.remove(keptWords.size() - 1);
          kept.remove(kept.size() - 1);
          break;
        }
      }
    }
    return new AnswerTokens(kept.stream().mapToInt(Integer::intValue).toArray());
  }

  /** The vocabulary's token ids. */
  public int[] ids() {
    return ids.clone();
  }

  /** The token that follows the first {@code length} tokens of {@code sequence}. */
  int next(int[] sequence, int length) {
    long h = 0x9E3779B97F4A7C15L;
    for (int i = Math.max(0, length - WINDOW); i < length; i++) {
      h = (h ^ sequence[i]) * 0xC2B2AE3D27D4EB4FL;
      h ^= h >>> 29;
    }
    return ids[(int) Math.floorMod(h, (long) ids.length)];
  }
}
