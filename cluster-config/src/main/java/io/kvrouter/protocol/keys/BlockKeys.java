package io.kvrouter.protocol.keys;

import java.util.Objects;
import net.openhft.hashing.LongHashFunction;

/**
 * Router block keys for one (model, block size): a chained 64-bit hash over the full blocks of a
 * prompt's token ids. Key {@code i} identifies block {@code i} together with everything before it,
 * so two prompts share key {@code i} exactly when they share their first {@code i + 1} blocks (up
 * to 64-bit collisions). The replica agent, the ingress and the tracker all call this class, so it
 * is the one definition of a router key; it lives with the wire protocol because a key is part of
 * what an agent and an ingress must agree on.
 *
 * <p>Definition (pinned by test vectors in {@code BlockKeysTest}):
 *
 * <pre>
 *   seed      = XXH3-64(seed 0, UTF-16 chars of "model") XOR blockSize * 0x9E3779B97F4A7C15
 *   local_i   = XXH3-64(seed, tokens of block i as u32 little-endian) XOR extras.blockExtra(i)
 *   key_i     = nz(XXH3-64(seed, LE u64 key_{i-1} || LE u64 local_i)),   key_{-1} = ROOT = 0
 *   nz(0)     = ZERO_SUBSTITUTE, nz(x) = x otherwise   (0 is reserved for "no parent")
 * </pre>
 *
 * The shape follows Dynamo's router-side hashing ({@code seq[i] = XXH3(seq[i-1] || local[i])},
 * ai-dynamo/dynamo {@code lib/kv-router/src/protocols.rs}, {@code compute_block_hash_for_seq} and
 * {@code compute_next_seq_hash}; compared in {@code docs/kv-events.md}, section 3), with the model
 * and block size folded into the seed so that keys of different models never meet in one index, and
 * with the first block chained to ROOT so that every key, including the first, goes through the
 * same chaining step.
 *
 * <p>Cost: one XXH3 pass over {@code 4 * blockSize} bytes plus one over 16 bytes per block (about
 * 15-25 ns per 16-token block). {@link #keysInto} and {@link #chain} allocate nothing. Instances
 * are immutable and thread-safe.
 */
public final class BlockKeys {

  /** Parent key of the first block: the same value as {@code BlocksStored.ROOT}. */
  public static final long ROOT = 0L;

  /** What a computed key of 0 becomes, so that 0 stays free for {@link #ROOT}. */
  public static final long ZERO_SUBSTITUTE = 0x6A09E667F3BCC909L;

  /** The default block size (vLLM's default on CUDA). */
  public static final int DEFAULT_BLOCK_SIZE = 16;

  private static final ThreadLocal<long[]> PAIR = ThreadLocal.withInitial(() -> new long[2]);

  private final String model;
  private final int blockSize;
  private final long seed;
  private final LongHashFunction hash;

  private BlockKeys(String model, int blockSize) {
    this.model = model;
    this.blockSize = blockSize;
    this.seed = LongHashFunction.xx3(0L).hashChars(model) ^ (blockSize * 0x9E3779B97F4A7C15L);
    this.hash = LongHashFunction.xx3(seed);
  }

  /**
   * The key function of one model.
   *
   * @throws IllegalArgumentException if {@code blockSize} is not positive
   */
  public static BlockKeys of(String model, int blockSize) {
    Objects.requireNonNull(model, "model");
    if (blockSize <= 0) {
      throw new IllegalArgumentException("blockSize must be positive, was " + blockSize);
    }
    return new BlockKeys(model, blockSize);
  }

  /** {@link #of(String, int)} with {@link #DEFAULT_BLOCK_SIZE}. */
  public static BlockKeys of(String model) {
    return of(model, DEFAULT_BLOCK_SIZE);
  }

  public String model() {
    return model;
  }

  public int blockSize() {
    return blockSize;
  }

  /** Number of full blocks in a prompt of {@code tokenCount} tokens. */
  public int blockCount(int tokenCount) {
    return tokenCount / blockSize;
  }

  /** The keys of all full blocks of {@code tokens}; a trailing partial block gets no key. */
  public long[] keys(int[] tokens, ExtraKeys extras) {
    long[] out = new long[tokens.length / blockSize];
    keysInto(tokens, tokens.length, extras, out);
    return out;
  }

  /** {@link #keys(int[], ExtraKeys)} with no extra keys. */
  public long[] keys(int[] tokens) {
    return keys(tokens, ExtraKeys.NONE);
  }

  /**
   * Allocation-free form: writes the keys of the full blocks among the first {@code tokenCount}
   * tokens into {@code out} and returns how many it wrote.
   *
   * @throws IllegalArgumentException if {@code out} is too short
   */
  public int keysInto(int[] tokens, int tokenCount, ExtraKeys extras, long[] out) {
    int blocks = tokenCount / blockSize;
    if (tokenCount > tokens.length) {
      throw new IllegalArgumentException("tokenCount " + tokenCount + " > tokens " + tokens.length);
    }
    if (out.length < blocks) {
      throw new IllegalArgumentException("out holds " + out.length + " keys, need " + blocks);
    }
    long parent = ROOT;
    boolean plain = extras.isEmpty();
    for (int i = 0; i < blocks; i++) {
      long extra = plain ? 0L : extras.blockExtra(i, blockSize);
      parent = chainLocal(parent, localHash(tokens, i * blockSize) ^ extra);
      out[i] = parent;
    }
    return blocks;
  }

  /**
   * The key of one block given its parent's key: what an agent needs for an engine event that
   * announces blocks under a parent it already mapped. Allocation-free.
   *
   * @param parentKey the key of the previous block, or {@link #ROOT} for block 0
   * @param tokens holds the block's {@code blockSize} tokens from {@code offset}
   * @param blockExtra {@code extras.blockExtra(blockIndex, blockSize)}, or 0
   */
  public long chain(long parentKey, int[] tokens, int offset, long blockExtra) {
    if (offset < 0 || offset + blockSize > tokens.length) {
      throw new IllegalArgumentException(
          "block at " + offset + " does not fit in " + tokens.length + " tokens");
    }
    return chainLocal(parentKey, localHash(tokens, offset) ^ blockExtra);
  }

  private long localHash(int[] tokens, int offset) {
    return hash.hashInts(tokens, offset, blockSize);
  }

  private long chainLocal(long parent, long local) {
    long[] pair = PAIR.get();
    pair[0] = parent;
    pair[1] = local;
    long key = hash.hashLongs(pair, 0, 2);
    return key == ROOT ? ZERO_SUBSTITUTE : key;
  }

  @Override
  public String toString() {
    return "BlockKeys[" + model + ", blockSize=" + blockSize + "]";
  }
}
