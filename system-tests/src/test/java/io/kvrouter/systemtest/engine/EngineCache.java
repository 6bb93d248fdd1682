package io.kvrouter.systemtest.engine;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The test engine's prefix cache, written from vLLM's documented behaviour and nothing of ours
 * (vllm/v1/core/kv_cache_utils.py {@code hash_block_tokens}, vllm/v1/core/block_pool.py):
 *
 * <ul>
 *   <li>only full blocks are cached; block {@code i}'s digest is SHA-256 over the parent's full
 *       digest and the block's token ids (4 bytes big-endian each); block 0's parent is a random
 *       32-byte seed drawn per process, as vLLM's NONE_HASH is when PYTHONHASHSEED is unset, so a
 *       restarted engine hashes the same tokens differently;
 *   <li>the hash on the wire is the digest's last 8 bytes read big-endian, unsigned (vLLM's {@code
 *       VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES} default);
 *   <li>a request reuses its longest cached prefix (a hit is never re-announced), then caches its
 *       new full blocks, evicting the least recently used blocks of other requests when full (each
 *       eviction is announced by hash); a block whose parent was evicted stays cached.
 * </ul>
 *
 * Requests are cached one at a time (the engine runs them serially). Not thread-safe.
 */
final class EngineCache {

  /** A block newly cached: its wire hash, its parent's (null at block 0) and its tokens. */
  record Stored(long hash, Long parentHash, int[] tokens) {}

  /** What caching one request did, in event order. */
  record Outcome(List<Long> evicted, List<Stored> stored, int hitTokens) {}

  private record Block(long hash, int[] prefix) {}

  private final int blockSize;
  private final int capacity;
  private final byte[] seed = new byte[32];
  private final LinkedHashMap<String, Block> blocks = new LinkedHashMap<>(256, 0.75f, true);

  EngineCache(int blockSize, int capacity) {
    this.blockSize = blockSize;
    this.capacity = capacity;
    new SecureRandom().nextBytes(seed);
  }

  int blockSize() {
    return blockSize;
  }

  /** Caches the full blocks of {@code tokens}. */
  Outcome cache(int[] tokens) {
    int full = tokens.length / blockSize;
    byte[] parent = seed;
    Long parentHash = null;
    int hits = 0;
    List<byte[]> digests = new ArrayList<>(full);
    for (int i = 0; i < full; i++) {
      parent = digest(parent, tokens, i * blockSize);
      digests.add(parent);
    }
    int i = 0;
    for (; i < full; i++) {
      Block b = blocks.get(key(digests.get(i)));
      if (b == null) {
        break;
      }
      parentHash = b.hash();
      hits += blockSize;
    }
    List<Long> evicted = new ArrayList<>();
    List<Stored> stored = new ArrayList<>();
    for (int j = i; j < full; j++) {
      if (blocks.size() >= capacity) {
        Iterator<Map.Entry<String, Block>> lru = blocks.entrySet().iterator();
        evicted.add(lru.next().getValue().hash());
        lru.remove();
      }
      long hash = ByteBuffer.wrap(digests.get(j), 24, 8).getLong();
      int[] prefix = Arrays.copyOf(tokens, (j + 1) * blockSize);
      blocks.put(key(digests.get(j)), new Block(hash, prefix));
      stored.add(
          new Stored(
              hash, parentHash, Arrays.copyOfRange(tokens, j * blockSize, (j + 1) * blockSize)));
      parentHash = hash;
    }
    return new Outcome(evicted, stored, hits);
  }

  /** Each cached block's token prefix (its own tokens and all before them). */
  List<int[]> prefixes() {
    List<int[]> out = new ArrayList<>(blocks.size());
    for (Block b : blocks.values()) {
      out.add(b.prefix());
    }
    return out;
  }

  int size() {
    return blocks.size();
  }

  int capacity() {
    return capacity;
  }

  private static String key(byte[] digest) {
    return Arrays.toString(digest);
  }

  private byte[] digest(byte[] parent, int[] tokens, int from) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(parent);
      ByteBuffer b = ByteBuffer.allocate(4 * blockSize);
      for (int k = 0; k < blockSize; k++) {
        b.putInt(tokens[from + k]);
      }
      sha.update(b.array());
      return sha.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
