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
 * The all-ASCII part of OpenAI's {@code o200k_base} vocabulary as a rank lookup for {@link
 * O200kAsciiEncoder}: the rank of a byte string, or {@link #NO_RANK} when it is no token. Read once
 * from the vocabulary file jtokkit ships ({@code o200k_base.tiktoken}: base64 token and rank per
 * line, from tiktoken), keeping about 129k tokens. Lookups allocate nothing; O(length) per lookup;
 * about 7 MB. Immutable after construction and thread-safe.
 */
final class O200kRanks {

  /*
   * Implementation notes.
   *
   * Rank lookups: tokens of one or two bytes sit in a dense table indexed by the bytes (66 KB,
   * which stays in the core's cache: a piece's merge starts with a lookup of each adjacent byte
   * pair). Tokens of three to 7 bytes sit in an open-addressing table keyed by the bytes packed
   * into a long with the length in the top byte (ASCII bytes are < 0x80 and the length keeps "a"
   * apart from "a\0"), each key beside its rank so that a hit reads one cache line; longer tokens sit in a second open-addressing table keyed by an
   * FNV-1a hash of their bytes, each slot pointing at the token's bytes in one pool so that a hit
   * is confirmed byte by byte. Neither lookup allocates (a String built per probe would be the hot
   * spot of tokenizing).
   */

  /** The rank of a byte string that is no token. */
  static final int NO_RANK = Integer.MAX_VALUE;

  private static final String RESOURCE = "/com/knuddels/jtokkit/o200k_base.tiktoken";

  private final int[] pairRanks;
  private final long[] shortEntries;
  private final int mask;
  private final long[] longHashes;
  private final int[] longStarts;
  private final int[] longLengths;
  private final int[] longRanks;
  private final byte[] longPool;
  private final int longMask;
  private final int longest;

  private O200kRanks(Map<String, Integer> ascii) {
    int capacity = Integer.highestOneBit(ascii.size() * 2) * 2;
    pairRanks = new int[128 * 129];
    Arrays.fill(pairRanks, NO_RANK);
    shortEntries = new long[2 * capacity];
    mask = capacity - 1;
    Map<String, Integer> longer = new HashMap<>();
    for (Map.Entry<String, Integer> e : ascii.entrySet()) {
      String token = e.getKey();
      if (token.length() <= 2) {
        pairRanks[pairIndex(token.charAt(0), token.length() == 2 ? token.charAt(1) : -1)] =
            e.getValue();
      } else if (token.length() <= 7) {
        long key = pack(token);
        int s = slot(key);
        while (shortEntries[2 * s] != 0L) {
          s = (s + 1) & mask;
        }
        shortEntries[2 * s] = key;
        shortEntries[2 * s + 1] = e.getValue();
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
  static O200kRanks load() {
    Map<String, Integer> ascii = new HashMap<>();
    try (InputStream in = O200kRanks.class.getResourceAsStream(RESOURCE)) {
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
    return new O200kRanks(ascii);
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

  /** The dense table's index of a one-byte ({@code second} -1) or two-byte token. */
  private static int pairIndex(int first, int second) {
    return first * 129 + second + 1;
  }

  private int slot(long key) {
    return (int) ((key * 0x9E3779B97F4A7C15L) >>> 40) & mask;
  }

  /** The rank of {@code text[from, to)} (ASCII), or {@link #NO_RANK}. */
  int rank(byte[] text, int from, int to) {
    int len = to - from;
    if (len <= 2) {
      return pairRanks[pairIndex(text[from], len == 2 ? text[from + 1] : -1)];
    }
    if (len <= 7) {
      long key = (long) len << 56;
      for (int i = 0; i < len; i++) {
        key |= (long) text[from + i] << (8 * i);
      }
      int s = slot(key);
      while (true) {
        long probe = shortEntries[2 * s];
        if (probe == key) {
          return (int) shortEntries[2 * s + 1];
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
}
