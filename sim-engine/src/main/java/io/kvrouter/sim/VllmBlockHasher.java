package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

/**
 * vLLM's prefix-block hash with {@code --prefix-caching-hash-algo sha256_cbor}: the simulated
 * engine's own block hashes (deliberately not the router's keys).
 *
 * <p>Following vLLM {@code vllm/v1/core/kv_cache_utils.py} ({@code hash_block_tokens}, {@code
 * init_none_hash}) and {@code vllm/utils/hashing.py} ({@code sha256_cbor}):
 *
 * <ul>
 *   <li>{@code NONE_HASH = sha256(cbor(str(seed)))}, the seed playing PYTHONHASHSEED;
 *   <li>{@code h_i = sha256(canonical_cbor([parent_digest, tokens_i, extra_i]))} with the parent
 *       the previous block's full 32-byte digest (NONE_HASH for block 0), {@code extra_i} nil or an
 *       array of the block's extra keys: text items (LoRA name; cache salt on the first block only)
 *       and {@code [identifier, offset]} pairs for the images the block overlaps;
 *   <li>the value on the wire ({@code VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1}) is the digest's last
 *       8 bytes read big-endian: {@link #low64(byte[])}.
 * </ul>
 *
 * Pinned by the spec's test vectors (seed "0", tokens 1..32, block 16).
 *
 * <p>Thread-safe (a MessageDigest per call). Cost: one SHA-256 over ~3 + 5·blockSize bytes per
 * block.
 */
public final class VllmBlockHasher {

  /** The {@code --prefix-caching-hash-algo} this hasher implements. */
  public static final String HASH_ALGO = "sha256_cbor";

  private final byte[] noneHash;

  /**
   * @param seed the PYTHONHASHSEED-like seed string, e.g. {@code "0"}
   */
  public VllmBlockHasher(String seed) {
    ByteArrayOutputStream cbor = new ByteArrayOutputStream();
    writeText(cbor, seed);
    this.noneHash = sha256(cbor.toByteArray());
  }

  /** The root digest that stands in as parent of block 0. Returns a copy. */
  public byte[] noneHash() {
    return noneHash.clone();
  }

  /**
   * Digest of one block.
   *
   * @param parentDigest the previous block's digest, or {@code null} for the first block
   * @param tokens token ids; the block is {@code tokens[from, from + blockSize)}
   * @param extra the block's extra keys, or empty for none (CBOR nil): strings and {@link
   *     EngineEvent.TextKey}s are text items (LoRA name, cache salt), an {@link
   *     EngineEvent.MediaKey} is the tuple {@code (identifier, offset)}, a two-element array of a
   *     text and an integer, as vLLM's CBOR encoding of a Python tuple
   */
  public byte[] blockDigest(
      byte[] parentDigest, int[] tokens, int from, int blockSize, List<?> extra) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(8 + 5 * blockSize);
    out.write(0x83);
    byte[] parent = parentDigest == null ? noneHash : parentDigest;
    writeHead(out, 2, parent.length);
    out.write(parent, 0, parent.length);
    writeHead(out, 4, blockSize);
    for (int i = from; i < from + blockSize; i++) {
      writeHead(out, 0, tokens[i]);
    }
    if (extra.isEmpty()) {
      out.write(0xf6);
    } else {
      writeHead(out, 4, extra.size());
      for (Object item : extra) {
        writeExtra(out, item);
      }
    }
    return sha256(out.toByteArray());
  }

  /** The wire value of a digest: its last 8 bytes, big-endian. */
  public static long low64(byte[] digest) {
    long v = 0;
    for (int i = digest.length - 8; i < digest.length; i++) {
      v = (v << 8) | (digest[i] & 0xFF);
    }
    return v;
  }

  private static void writeExtra(ByteArrayOutputStream out, Object item) {
    if (item instanceof String s) {
      writeText(out, s);
    } else if (item instanceof EngineEvent.TextKey t) {
      writeText(out, t.value());
    } else if (item instanceof EngineEvent.MediaKey m) {
      writeHead(out, 4, 2);
      writeText(out, m.identifier());
      if (m.offset() >= 0) {
        writeHead(out, 0, m.offset());
      } else {
        writeHead(out, 1, -1 - m.offset());
      }
    } else {
      throw new IllegalArgumentException("no CBOR form for extra key " + item);
    }
  }

  private static void writeText(ByteArrayOutputStream out, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    writeHead(out, 3, b.length);
    out.write(b, 0, b.length);
  }

  /** Canonical (shortest) CBOR head for major type {@code major} and argument {@code v}. */
  private static void writeHead(ByteArrayOutputStream out, int major, long v) {
    int m = major << 5;
    if (v < 24) {
      out.write(m | (int) v);
    } else if (v < 0x100) {
      out.write(m | 24);
      out.write((int) v);
    } else if (v < 0x10000) {
      out.write(m | 25);
      out.write((int) (v >>> 8));
      out.write((int) v & 0xFF);
    } else if (v < 0x1_0000_0000L) {
      out.write(m | 26);
      for (int s = 24; s >= 0; s -= 8) {
        out.write((int) (v >>> s) & 0xFF);
      }
    } else {
      out.write(m | 27);
      for (int s = 56; s >= 0; s -= 8) {
        out.write((int) (v >>> s) & 0xFF);
      }
    }
  }

  private static byte[] sha256(byte[] in) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(in);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 missing from the JRE", e);
    }
  }
}
