package io.kvrouter.ingress.tokenize;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/**
 * OpenAI's {@code o200k_base} encoding of pure-ASCII text, without regular expressions or
 * allocation per piece: the same ids as tiktoken (and jtokkit) for any string whose chars are all
 * below U+0080; {@link #encode} returns {@code null} for any other string, which the caller then
 * hands to jtokkit.
 *
 * <p>Why: jtokkit runs o200k's pre-tokenizer as a {@code java.util.regex} pattern with Unicode
 * classes and case-insensitive groups, and merges byte pairs through a {@code HashMap} keyed by
 * fresh byte-array wrappers; on the ingress's 1k-token prompts that was the largest CPU cost per
 * request (about 0.35 M tokens/s on word-like text). This class does the same work with a
 * hand-written splitter for the ASCII range and a primitive rank table: measured about ten times
 * faster (see {@code TiktokenThroughput} in the tests).
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
 * token and rank per line, from tiktoken), keeping only all-ASCII tokens (about 60k). Cost:
 * O(length) splitting, O(piece²) merging per piece not in the vocabulary (pieces are words: short);
 * memory about 2 MB. Immutable after construction and thread-safe.
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
   * Rank lookups: tokens of up to 7 bytes sit in an open-addressing table keyed by the bytes
   * packed into a long with the length in the top byte (ASCII bytes are < 0x80 and the length
   * keeps "a" apart from "a\0"); longer tokens sit in a second open-addressing table keyed by an
   * FNV-1a hash of their bytes, each slot pointing at the token's bytes in one pool so that a hit
   * is confirmed byte by byte. Neither lookup allocates (the long one used to build a String per
   * probe and look it up in an immutable map: the top self frame of tokenizing in a JFR profile).
   */

  private static final byte UPPER = 1;
  private static final byte LOWER = 2;
  private static final byte DIGIT = 3;
  private static final byte SPACE = 4;
  private static final byte OTHER = 5;
  private static final byte[] CLASS = new byte[128];

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

  private static final int NO_RANK = Integer.MAX_VALUE;
  private static final String RESOURCE = "/com/knuddels/jtokkit/o200k_base.tiktoken";

  private final long[] shortKeys;
  private final int[] shortRanks;
  private final int mask;
  private final long[] longHashes;
  private final int[] longStarts;
  private final int[] longLengths;
  private final int[] longRanks;
  private final byte[] longPool;
  private final int longMask;
  private final int longest;

  private O200kAsciiEncoder(Map<String, Integer> ascii) {
    int capacity = Integer.highestOneBit(ascii.size() * 2) * 2;
    shortKeys = new long[capacity];
    shortRanks = new int[capacity];
    mask = capacity - 1;
    Map<String, Integer> longer = new HashMap<>();
    for (Map.Entry<String, Integer> e : ascii.entrySet()) {
      String token = e.getKey();
      if (token.length() <= 7) {
        long key = pack(token);
        int s = slot(key);
        while (shortKeys[s] != 0L) {
          s = (s + 1) & mask;
        }
        shortKeys[s] = key;
        shortRanks[s] = e.getValue();
      } else {
        longer.put(token, e.getValue());
      }
    }
    int longCapacity = Integer.highestOneBit(Math.max(1, longer.size()) * 2) * 2;
    longHashes = new long[longCapacity];
    longStarts = new int[longCapacity];
    longLengths = new int[longCapacity];
    longRanks = new int[longCapacity];
    longMask = longCapacity - 1;
    int poolSize = 0;
    int max = 0;
    for (String token : longer.keySet()) {
      poolSize += token.length();
      max = Math.max(max, token.length());
    }
    longest = max;
    longPool = new byte[poolSize];
    int at = 0;
    for (Map.Entry<String, Integer> e : longer.entrySet()) {
      byte[] token = e.getKey().getBytes(StandardCharsets.ISO_8859_1);
      System.arraycopy(token, 0, longPool, at, token.length);
      long hash = fnv(longPool, at, token.length);
      int s = slot(hash) & longMask;
      while (longLengths[s] != 0) {
        s = (s + 1) & longMask;
      }
      longHashes[s] = hash;
      longStarts[s] = at;
      longLengths[s] = token.length;
      longRanks[s] = e.getValue();
      at += token.length;
    }
  }

  /** FNV-1a (64 bit) of {@code bytes[from, from + len)}. */
  private static long fnv(byte[] bytes, int from, int len) {
    long h = 0xcbf29ce484222325L;
    for (int i = from, end = from + len; i < end; i++) {
      h = (h ^ bytes[i]) * 0x100000001b3L;
    }
    return h;
  }

  /**
   * Loads the ranks from jtokkit's copy of the vocabulary.
   *
   * @throws TokenizerConfigException if the resource is missing or malformed
   */
  static O200kAsciiEncoder load() {
    Map<String, Integer> ascii = new HashMap<>();
    try (InputStream in = O200kAsciiEncoder.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new TokenizerConfigException("jtokkit's " + RESOURCE + " is not on the class path");
      }
      BufferedReader reader =
          new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
      Base64.Decoder base64 = Base64.getDecoder();
      for (String line; (line = reader.readLine()) != null; ) {
        int space = line.indexOf(' ');
        if (space <= 0) {
          continue;
        }
        byte[] token = base64.decode(line.substring(0, space));
        if (isAscii(token)) {
          ascii.put(
              new String(token, StandardCharsets.ISO_8859_1),
              Integer.parseInt(line.substring(space + 1).trim()));
        }
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new TokenizerConfigException("cannot read " + RESOURCE + ": " + e.getMessage(), e);
    }
    return new O200kAsciiEncoder(ascii);
  }

  private static boolean isAscii(byte[] token) {
    for (byte b : token) {
      if (b < 0) {
        return false;
      }
    }
    return token.length > 0;
  }

  private static long pack(CharSequence s) {
    long key = (long) s.length() << 56;
    for (int i = 0; i < s.length(); i++) {
      key |= (long) s.charAt(i) << (8 * i);
    }
    return key;
  }

  private int slot(long key) {
    return (int) ((key * 0x9E3779B97F4A7C15L) >>> 40) & mask;
  }

  /** The rank of {@code text[from, to)} (ASCII), or {@link #NO_RANK}. */
  private int rank(byte[] text, int from, int to) {
    int len = to - from;
    if (len <= 7) {
      long key = (long) len << 56;
      for (int i = 0; i < len; i++) {
        key |= (long) text[from + i] << (8 * i);
      }
      int s = slot(key);
      while (true) {
        long probe = shortKeys[s];
        if (probe == key) {
          return shortRanks[s];
        }
        if (probe == 0L) {
          return NO_RANK;
        }
        s = (s + 1) & mask;
      }
    }
    if (len > longest) {
      return NO_RANK;
    }
    long hash = fnv(text, from, len);
    int s = slot(hash) & longMask;
    while (longLengths[s] != 0) {
      if (longHashes[s] == hash
          && longLengths[s] == len
          && Arrays.equals(longPool, longStarts[s], longStarts[s] + len, text, from, to)) {
        return longRanks[s];
      }
      s = (s + 1) & longMask;
    }
    return NO_RANK;
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
      int whole = rank(bytes, i, end);
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
      ranks[k] = rank(text, parts[k], parts[k + 2]);
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
      ranks[at] = at + 2 < count ? rank(text, parts[at], parts[at + 2]) : NO_RANK;
      if (at > 0) {
        ranks[at - 1] = rank(text, parts[at - 1], parts[at + 1]);
      }
    }
    for (int k = 0; k + 1 < count; k++) {
      int r = rank(text, parts[k], parts[k + 1]);
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
