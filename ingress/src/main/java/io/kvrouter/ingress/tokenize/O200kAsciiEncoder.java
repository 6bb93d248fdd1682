package io.kvrouter.ingress.tokenize;

/**
 * OpenAI's {@code o200k_base} encoding of pure-ASCII text, without regular expressions or
 * allocation per piece: the same ids as tiktoken (and jtokkit) for any string whose chars are all
 * below U+0080; {@link #encode} returns {@code null} for any other string, which the caller then
 * hands to jtokkit.
 *
 * <p>Why: jtokkit runs o200k's pre-tokenizer as a {@code java.util.regex} pattern with Unicode
 * classes and case-insensitive groups, and merges byte pairs through a {@code HashMap} keyed by
 * fresh byte-array wrappers, which made it the largest CPU cost of an ingress request. This class
 * does the same work with a hand-written splitter for the ASCII range and a primitive rank table,
 * about ten times faster than jtokkit on word-like ASCII text.
 *
 * <p>Exactness: the splitter implements, for ASCII input, o200k's pattern as tiktoken writes it
 * ({@code openai/tiktoken} {@code tiktoken_ext/openai_public.py}, {@code o200k_base}; jtokkit 1.1.0
 * {@code EncodingFactory} compiles the same alternatives with {@code UNICODE_CHARACTER_CLASS})
 * alternative by alternative, including the regex engine's backtracking where it matters (noted at
 * each alternative below); byte pairs merge lowest rank first, leftmost on ties, as tiktoken's
 * {@code byte_pair_merge}. {@code O200kAsciiEncoderPropertiesTest} holds it to jtokkit on random
 * ASCII strings built to hit every alternative.
 *
 * <p>Ranks: read once from the vocabulary file jtokkit ships ({@code o200k_base.tiktoken}, base64
 * token and rank per line, from tiktoken), keeping only all-ASCII tokens (about 129k). Cost:
 * O(length) splitting, O(piece²) merging per piece not in the vocabulary (pieces are words: short);
 * memory about 3 MB. Immutable after construction and thread-safe.
 */
final class O200kAsciiEncoder {

  /*
   * Implementation notes.
   *
   * Character classes restricted to ASCII, with the pattern's UNICODE_CHARACTER_CLASS meaning:
   * letters are A-Z (Lu) and a-z (Ll) (no ASCII char is Lt, Lm, Lo or M), digits 0-9, white
   * space \t \n \u000B \f \r and space (Unicode White_Space; 0x1C-0x1F are not), everything else
   * is "other". The table CLASS holds one of these per char; O200kAsciiEncoderPropertiesTest checks
   * it against java.util.regex.
   *
   * Rank lookups: see O200kRanks.
   */

  private static final byte UPPER = 1;
  private static final byte LOWER = 2;
  private static final byte DIGIT = 3;
  private static final byte SPACE = 4;
  private static final byte OTHER = 5;
  private static final byte[] CLASS = new byte[128];
  private static final int NO_RANK = O200kRanks.NO_RANK;

  static {
    for (int c = 0; c < 128; c++) {
      CLASS[c] = OTHER;
    }
    for (int c = 'A'; c <= 'Z'; c++) {
      CLASS[c] = UPPER;
    }
    for (int c = 'a'; c <= 'z'; c++) {
      CLASS[c] = LOWER;
    }
    for (int c = '0'; c <= '9'; c++) {
      CLASS[c] = DIGIT;
    }
    for (char c : new char[] {'\t', '\n', '\u000B', '\f', '\r', ' '}) {
      CLASS[c] = SPACE;
    }
  }

  private final O200kRanks vocabulary;

  private O200kAsciiEncoder(O200kRanks vocabulary) {
    this.vocabulary = vocabulary;
  }

  /**
   * Loads the ranks from jtokkit's copy of the vocabulary.
   *
   * @throws TokenizerConfigException if the resource is missing or malformed
   */
  static O200kAsciiEncoder load() {
    return new O200kAsciiEncoder(O200kRanks.load());
  }

  /** True when every char of {@code text} is below U+0080. */
  static boolean isAscii(String text) {
    for (int i = 0, n = text.length(); i < n; i++) {
      if (text.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  /** The o200k ids of {@code text}, or {@code null} when it holds a char at or above U+0080. */
  int[] encode(String text) {
    int n = text.length();
    byte[] bytes = new byte[n];
    for (int i = 0; i < n; i++) {
      char c = text.charAt(i);
      if (c >= 0x80) {
        return null;
      }
      bytes[i] = (byte) c;
    }
    Ids out = new Ids(Math.max(16, n / 3));
    int[] parts = new int[64];
    int[] ranks = new int[64];
    for (int i = 0; i < n; ) {
      int end = pieceEnd(bytes, i, n);
      int whole = vocabulary.rank(bytes, i, end);
      if (whole != NO_RANK) {
        out.add(whole);
      } else {
        if (end - i + 1 > parts.length) {
          parts = new int[end - i + 1];
          ranks = new int[end - i + 1];
        }
        merge(bytes, i, end, parts, ranks, out);
      }
      i = end;
    }
    return out.toArray();
  }

  /**
   * tiktoken's {@code byte_pair_merge} over {@code text[from, to)}: parts are piece boundaries;
   * {@code ranks[k]} is the rank of the bytes from part k to part k + 2, the pair a merge at k
   * would form; the lowest rank merges first, the leftmost on ties.
   */
  private void merge(byte[] text, int from, int to, int[] parts, int[] ranks, Ids out) {
    int count = to - from + 1;
    for (int k = 0; k < count; k++) {
      parts[k] = from + k;
    }
    for (int k = 0; k + 2 < count; k++) {
      ranks[k] = vocabulary.rank(text, parts[k], parts[k + 2]);
    }
    ranks[count - 2] = NO_RANK;
    ranks[count - 1] = NO_RANK;
    while (count > 2) {
      int best = NO_RANK;
      int at = -1;
      for (int k = 0; k < count - 1; k++) {
        if (ranks[k] < best) {
          best = ranks[k];
          at = k;
        }
      }
      if (at < 0) {
        break;
      }
      System.arraycopy(parts, at + 2, parts, at + 1, count - at - 2);
      System.arraycopy(ranks, at + 2, ranks, at + 1, count - at - 2);
      count--;
      ranks[at] = at + 2 < count ? vocabulary.rank(text, parts[at], parts[at + 2]) : NO_RANK;
      if (at > 0) {
        ranks[at - 1] = vocabulary.rank(text, parts[at - 1], parts[at + 1]);
      }
    }
    for (int k = 0; k + 1 < count; k++) {
      int r = vocabulary.rank(text, parts[k], parts[k + 1]);
      if (r == NO_RANK) {
        throw new IllegalStateException("no o200k token for a merged ASCII part");
      }
      out.add(r);
    }
  }

  /**
   * Where the o200k piece starting at {@code i} ends: the first of the pattern's seven alternatives
   * that matches at {@code i}, as the regex engine would find it.
   */
  static int pieceEnd(byte[] s, int i, int n) {
    int c = CLASS[s[i]];
    // 1. [^\r\n\p{L}\p{N}]?[Lu...]*[Ll...]+('s|'t|'re|'ve|'m|'ll|'d)?  (case-insensitive suffix)
    // 2. [^\r\n\p{L}\p{N}]?[Lu...]+[Ll...]*(same suffix)?
    // The optional prefix is never a letter, so giving it back cannot help either alternative.
    int j = i;
    if (c == SPACE || c == OTHER) {
      if (s[i] != '\r' && s[i] != '\n' && i + 1 < n) {
        int next = CLASS[s[i + 1]];
        if (next == UPPER || next == LOWER) {
          j = i + 1;
        }
      }
    }
    if (j < n && (CLASS[s[j]] == UPPER || CLASS[s[j]] == LOWER)) {
      int k = j;
      while (k < n && CLASS[s[k]] == UPPER) {
        k++;
      }
      int m = k;
      while (m < n && CLASS[s[m]] == LOWER) {
        m++;
      }
      // Alternative 1 needs a lower-case run after the upper-case one; otherwise alternative 2
      // matches the upper-case run (at least one char, since s[j] is a letter and not lower).
      return contraction(s, m, n);
    }
    // 3. \p{N}{1,3}
    if (c == DIGIT) {
      int k = i + 1;
      while (k < n && k < i + 3 && CLASS[s[k]] == DIGIT) {
        k++;
      }
      return k;
    }
    // 4. " ?[^\s\p{L}\p{N}]+[\r\n/]*"
    int k = i;
    if (s[k] == ' ' && k + 1 < n && CLASS[s[k + 1]] == OTHER) {
      k++;
    }
    if (CLASS[s[k]] == OTHER) {
      while (k < n && CLASS[s[k]] == OTHER) {
        k++;
      }
      while (k < n && (s[k] == '\r' || s[k] == '\n' || s[k] == '/')) {
        k++;
      }
      return k;
    }
    // s[i] is white space: e = end of the run.
    int e = i;
    int lastNewline = -1;
    while (e < n && CLASS[s[e]] == SPACE) {
      if (s[e] == '\r' || s[e] == '\n') {
        lastNewline = e;
      }
      e++;
    }
    // 5. \s*[\r\n]+ : the greedy \s* backs off to the last line break of the run.
    if (lastNewline >= 0) {
      return lastNewline + 1;
    }
    // 6. \s+(?!\S) : the whole run at the end of the text, else all but its last char.
    if (e == n) {
      return e;
    }
    if (e - i >= 2) {
      return e - 1;
    }
    // 7. \s+
    return e;
  }

  /** The end of an optional case-insensitive {@code 's|'t|'re|'ve|'m|'ll|'d} at {@code m}. */
  private static int contraction(byte[] s, int m, int n) {
    if (m + 1 >= n || s[m] != '\'') {
      return m;
    }
    int a = s[m + 1] | 0x20;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') {
      return m + 2;
    }
    if (m + 2 < n) {
      int b = s[m + 2] | 0x20;
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        return m + 3;
      }
    }
    return m;
  }

  /** A growable int list. */
  private static final class Ids {
    private int[] ids;
    private int size;

    Ids(int capacity) {
      ids = new int[capacity];
    }

    void add(int id) {
      if (size == ids.length) {
        ids = java.util.Arrays.copyOf(ids, size * 2);
      }
      ids[size++] = id;
    }

    int[] toArray() {
      return java.util.Arrays.copyOf(ids, size);
    }
  }
}
