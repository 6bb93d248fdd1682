package io.kvrouter.protocol.keys;

import java.util.Arrays;
import java.util.Objects;
import net.openhft.hashing.LongHashFunction;

/**
 * The per-request inputs that enter block keys besides the token ids: the LoRA adapter name (every
 * block), the cache salt (first block only, as vLLM's {@code cache_salt}) and multimodal items
 * (each item enters every block its placeholder tokens overlap).
 *
 * <p>Strings are hashed once, at construction, each under its own domain seed so that a LoRA name
 * and a salt with the same text never produce the same extra key (vLLM issue #44701 shows the
 * untagged form colliding in vLLM's {@code vllm/v1/core/kv_cache_utils.py}; see {@code
 * docs/kv-events.md}, section 3). Immutable; the arrays are copied in.
 */
public final class ExtraKeys {

  /** The names of the inputs that enter block keys besides token ids, as admin views list them. */
  public static final java.util.List<String> KINDS = java.util.List.of("lora", "cache_salt", "mm");

  /** No LoRA, no salt, no multimodal items: the common case. */
  public static final ExtraKeys NONE =
      new ExtraKeys(null, null, new long[0], new int[0], new int[0]);

  private static final LongHashFunction LORA = LongHashFunction.xx3(0x4c6f5241L);
  private static final LongHashFunction SALT = LongHashFunction.xx3(0x53616c74L);
  private static final LongHashFunction MEDIA = LongHashFunction.xx3(0x4d656469L);
  private static final LongHashFunction MEDIA_ID = LongHashFunction.xx3(0x4d6d4964L);

  private final String loraName;
  private final String cacheSalt;
  private final long loraKey;
  private final long saltKey;
  private final long[] mmHashes;
  private final int[] mmStart;
  private final int[] mmLength;

  private ExtraKeys(
      String loraName, String cacheSalt, long[] mmHashes, int[] mmStart, int[] mmLength) {
    this.loraName = loraName;
    this.cacheSalt = cacheSalt;
    this.loraKey = loraName == null ? 0L : LORA.hashChars(loraName);
    this.saltKey = cacheSalt == null ? 0L : SALT.hashChars(cacheSalt);
    this.mmHashes = mmHashes;
    this.mmStart = mmStart;
    this.mmLength = mmLength;
  }

  /** Extra keys with a LoRA adapter name and/or a cache salt; either may be {@code null}. */
  public static ExtraKeys of(String loraName, String cacheSalt) {
    if (loraName == null && cacheSalt == null) {
      return NONE;
    }
    return new ExtraKeys(loraName, cacheSalt, new long[0], new int[0], new int[0]);
  }

  /**
   * Returns a copy that also carries one multimodal item: its content hash and the token range
   * {@code [startToken, startToken + length)} its placeholder tokens occupy in the prompt.
   */
  public ExtraKeys withMedia(long itemHash, int startToken, int length) {
    if (startToken < 0 || length <= 0) {
      throw new IllegalArgumentException(
          "media item needs startToken >= 0 and length > 0, was " + startToken + ", " + length);
    }
    int n = mmHashes.length;
    long[] h = Arrays.copyOf(mmHashes, n + 1);
    int[] s = Arrays.copyOf(mmStart, n + 1);
    int[] l = Arrays.copyOf(mmLength, n + 1);
    h[n] = itemHash;
    s[n] = startToken;
    l[n] = length;
    return new ExtraKeys(loraName, cacheSalt, h, s, l);
  }

  /** The LoRA adapter name, or {@code null}. */
  public String loraName() {
    return loraName;
  }

  /** The cache salt, or {@code null}. */
  public String cacheSalt() {
    return cacheSalt;
  }

  /** True when nothing but the tokens enters the keys. */
  public boolean isEmpty() {
    return loraKey == 0L && saltKey == 0L && mmHashes.length == 0;
  }

  /**
   * The extra key of block {@code blockIndex} spanning tokens {@code [blockIndex*blockSize,
   * (blockIndex+1)*blockSize)}; 0 when nothing extra applies. Allocation-free. Media items enter
   * with their offset relative to the block start, as newest vLLM does, combined by addition so
   * that the order in which items were added does not matter.
   */
  public long blockExtra(int blockIndex, int blockSize) {
    long extra = loraKey;
    if (blockIndex == 0) {
      extra ^= saltTerm(saltKey);
    }
    if (mmHashes.length > 0) {
      long blockStart = (long) blockIndex * blockSize;
      long blockEnd = blockStart + blockSize;
      long media = 0L;
      for (int i = 0; i < mmHashes.length; i++) {
        long itemStart = mmStart[i];
        long itemEnd = itemStart + mmLength[i];
        if (itemStart < blockEnd && itemEnd > blockStart) {
          media += mediaTerm(mmHashes[i], itemStart - blockStart);
        }
      }
      extra ^= mediaSum(media);
    }
    return extra;
  }

  /**
   * The extra key of one block as an engine's KV event describes it (vLLM's per-block {@code
   * extra_keys}: the LoRA name, each multimodal item overlapping the block as its identifier and
   * its start relative to the block start, and the cache salt on the first block of a sequence).
   * Equal to {@link #blockExtra} of the request the engine cached: the agent and the ingress thus
   * derive the same key from the engine's event and from the client's request. Allocation-free.
   *
   * @param loraName the adapter name, or null
   * @param cacheSalt the salt, or null (pass it only for block 0 of a sequence, as vLLM does)
   * @param mediaItemHashes {@link #mediaItemHash} of each overlapping item's identifier
   * @param relativeStarts each item's first token minus the block's first token (negative when the
   *     item began in an earlier block)
   * @param mediaCount how many entries of the two arrays are used
   */
  public static long engineBlockExtra(
      String loraName,
      String cacheSalt,
      long[] mediaItemHashes,
      long[] relativeStarts,
      int mediaCount) {
    long extra = loraName == null ? 0L : LORA.hashChars(loraName);
    if (cacheSalt != null) {
      extra ^= saltTerm(SALT.hashChars(cacheSalt));
    }
    if (mediaCount > 0) {
      long media = 0L;
      for (int i = 0; i < mediaCount; i++) {
        media += mediaTerm(mediaItemHashes[i], relativeStarts[i]);
      }
      extra ^= mediaSum(media);
    }
    return extra;
  }

  /**
   * The item hash {@link #withMedia} takes for a multimodal item named by an engine identifier
   * (vLLM's {@code mm_hash}, or the client's {@code uuid}): the identifier's UTF-16 chars under the
   * media domain seed.
   */
  public static long mediaItemHash(String identifier) {
    return MEDIA_ID.hashChars(identifier);
  }

  /** {@link #withMedia} for an item named by its engine identifier. */
  public ExtraKeys withMedia(String identifier, int startToken, int length) {
    return withMedia(mediaItemHash(identifier), startToken, length);
  }

  private static long saltTerm(long saltKey) {
    return Long.rotateLeft(saltKey, 17);
  }

  private static long mediaTerm(long itemHash, long relativeStart) {
    return MEDIA.hashLong(itemHash ^ (relativeStart * 0x9E3779B97F4A7C15L));
  }

  private static long mediaSum(long media) {
    return Long.rotateLeft(media, 41);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ExtraKeys e
        && Objects.equals(loraName, e.loraName)
        && Objects.equals(cacheSalt, e.cacheSalt)
        && Arrays.equals(mmHashes, e.mmHashes)
        && Arrays.equals(mmStart, e.mmStart)
        && Arrays.equals(mmLength, e.mmLength);
  }

  @Override
  public int hashCode() {
    return Objects.hash(loraName, cacheSalt, Arrays.hashCode(mmHashes));
  }

  @Override
  public String toString() {
    return "ExtraKeys[lora="
        + loraName
        + ", salt="
        + (cacheSalt == null ? "none" : "set")
        + ", media="
        + mmHashes.length
        + "]";
  }
}
