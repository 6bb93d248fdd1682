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
 * about 3 MB. Immutable after construction and thread-safe.
 */
final class O200kRanks {

  /*
   * Implementation notes.
   *
   * Rank lookups: tokens of one or two bytes sit in a dense table indexed by the bytes (66 KB,
   * which stays in the core's cache: a piece's merge starts with a lookup of each adjacent byte
   * pair). Tokens of three to six bytes (about 74k) sit in an open-addressing table of one long
   * per token: the key (the length in 3 bits above the bytes at 7 bits each, 45 bits; the length
   * keeps "abc" apart from "abc\0") above the rank (18 bits), 1 MB at a load of about 0.56. The
   * merge of a word looks up most of its candidate parts here, and on a machine whose cores are
   * shared the table's misses in the caches are what tokenizing costs: this layout is an eighth of
   * the 8 MB of key-and-rank pairs per slot, at a load of a fifth, that it replaced. Tokens of seven
   * bytes, and any of three to six whose rank needs more than 18 bits (none in o200k), sit in a
   * table of key-and-rank pairs; longer tokens sit in a table keyed by an FNV-1a hash of their
   * bytes, the hash beside one long of the token's place in one pool of bytes, its length and its
   * rank (a probe reads one cache line; a hit is confirmed byte by byte in the pool). Each table is
   * sized for a load of a third to two thirds. No lookup allocates (a String built per probe would be the hot spot of tokenizing).
   */

  /** The rank of a byte string that is no token. */
  static final int NO_RANK = Integer.MAX_VALUE;

  private static final String RESOURCE = "/com/knuddels/jtokkit/o200k_base.tiktoken";

  /** Bits of a rank in a {@link #packed} entry, below its key. */
  private static final int RANK_BITS = 18;

  private static final long RANK_MASK = (1L << RANK_BITS) - 1;

  private final int[] pairRanks;
  private final long[] packed;
  private final int packedMask;
  private final long[] shortEntries;
  private final int mask;

  /** Whether {@link #shortEntries} holds tokens shorter than seven bytes (ranks over 18 bits). */
  private final boolean overflow;

  /**
   * Tokens of eight bytes or more: per slot, the FNV-1a hash of the bytes, then where they start in
   * {@link #longPool} (above bit 26), their length (8 bits above the rank) and the rank; a slot
   * whose second word is 0 is free.
   */
  private final long[] longEntries;

  private final byte[] longPool;
  private final int longMask;
  private final int longest;

  private O200kRanks(Map<String, Integer> ascii) {
    pairRanks = new int[128 * 129];
    Arrays.fill(pairRanks, NO_RANK);
    Map<String, Integer> small = new HashMap<>();
    Map<String, Integer> seven = new HashMap<>();
    Map<String, Integer> longer = new HashMap<>();
    for (Map.Entry<String, Integer> e : ascii.entrySet()) {
      String token = e.getKey();
      if (token.length() <= 2) {
        pairRanks[pairIndex(token.charAt(0), token.length() == 2 ? token.charAt(1) : -1)] =
            e.getValue();
      } else if (token.length() <= 6 && e.getValue() <= RANK_MASK) {
        small.put(token, e.getValue());
      } else if (token.length() <= 7) {
        seven.put(token, e.getValue());
      } else {
        longer.put(token, e.getValue());
      }
    }
    int packedCapacity = capacity(small.size());
    packed = new long[packedCapacity];
    packedMask = packedCapacity - 1;
    for (Map.Entry<String, Integer> e : small.entrySet()) {
      long key = pack7(e.getKey());
      int s = slot(key) & packedMask;
      while (packed[s] != 0L) {
        s = (s + 1) & packedMask;
      }
      packed[s] = key << RANK_BITS | e.getValue();
    }
    overflow = seven.keySet().stream().anyMatch(t -> t.length() < 7);
    int capacity = capacity(seven.size());
    shortEntries = new long[2 * capacity];
    mask = capacity - 1;
    for (Map.Entry<String, Integer> e : seven.entrySet()) {
      long key = pack(e.getKey());
      int s = slot(key) & mask;
      while (shortEntries[2 * s] != 0L) {
        s = (s + 1) & mask;
      }
      shortEntries[2 * s] = key;
      shortEntries[2 * s + 1] = e.getValue();
    }
    int longCapacity = capacity(longer.size());
    longEntries = new long[2 * longCapacity];
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
      while (longEntries[2 * s + 1] != 0L) {
        s = (s + 1) & longMask;
      }
      if (e.getValue() > RANK_MASK || token.length > 0xFF) {
        throw new TokenizerConfigException(
            "o200k token of rank " + e.getValue() + " does not fit the rank table");
      }
      longEntries[2 * s] = hash;
      longEntries[2 * s + 1] = (long) at << 26 | (long) token.length << RANK_BITS | e.getValue();
      at += token.length;
    }
  }

  /** A power of two that holds {@code n} keys at a load of 0.33 to 0.67. */
  private static int capacity(int n) {
    return Integer.highestOneBit(Math.max(1, n + n / 2)) * 2;
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

  /** A token of three to six ASCII bytes as a 45-bit key: its length above 7 bits per byte. */
  private static long pack7(CharSequence s) {
    long key = (long) s.length() << 42;
    for (int i = 0; i < s.length(); i++) {
      key |= (long) s.charAt(i) << (7 * i);
    }
    return key;
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

  /** A spread of {@code key}'s bits; callers mask it to their table's size (at most 2^24). */
  private static int slot(long key) {
    return (int) ((key * 0x9E3779B97F4A7C15L) >>> 40);
  }

  /** The rank of {@code text[from, to)} (ASCII), or {@link #NO_RANK}. */
  int rank(byte[] text, int from, int to) {
    int len = to - from;
    if (len <= 2) {
      return pairRanks[pairIndex(text[from], len == 2 ? text[from + 1] : -1)];
    }
    if (len <= 6) {
      long key = (long) len << 42;
      for (int i = 0; i < len; i++) {
        key |= (long) text[from + i] << (7 * i);
      }
      int s = slot(key) & packedMask;
      while (true) {
        long probe = packed[s];
        if (probe >>> RANK_BITS == key) {
          return (int) (probe & RANK_MASK);
        }
        if (probe == 0L) {
          if (!overflow) {
            return NO_RANK;
          }
          break;
        }
        s = (s + 1) & packedMask;
      }
    }
    if (len <= 7) {
      long key = (long) len << 56;
      for (int i = 0; i < len; i++) {
        key |= (long) text[from + i] << (8 * i);
      }
      int s = slot(key) & mask;
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
    while (true) {
      long entry = longEntries[2 * s + 1];
      if (entry == 0L) {
        return NO_RANK;
      }
      if (longEntries[2 * s] == hash && (int) (entry >>> RANK_BITS & 0xFF) == len) {
        int start = (int) (entry >>> 26);
        if (Arrays.equals(longPool, start, start + len, text, from, to)) {
          return (int) (entry & RANK_MASK);
        }
      }
      s = (s + 1) & longMask;
    }
  }
}
