package io.kvrouter.loadtest.workload;

/**
 * Derives Mooncake-style chained block ids from a prompt's token ids, for workloads that carry no
 * trace ids (the generators): id {@code i} hashes block {@code i}'s tokens together with id {@code
 * i - 1}, so it stands for its block and everything before it, like a trace's {@code hash_ids}. The
 * last block may be partial; its length enters the hash, as a trace gives a truncated last block
 * its own id.
 *
 * <p>Contract: two prompts get equal leading ids exactly as far as their full blocks agree (up to
 * 64-bit hash collisions). Not the router's block keys (those live in kv-tracker); only for the
 * engine-free reference counts of {@link BlockHitCounter}.
 *
 * <p>Cost: O(prompt tokens) time (one expansion plus one 64-bit mix per token), allocates the token
 * array and {@code 8 × ceil(length / blockTokens)} bytes.
 */
public final class ChainedBlockIds {

  private ChainedBlockIds() {}

  /** Chained ids of {@code prompt} in blocks of {@code blockTokens}. */
  public static long[] of(PromptTokens prompt, int blockTokens) {
    return of(prompt.toArray(), blockTokens);
  }

  /** Chained ids of {@code tokens} in blocks of {@code blockTokens}. */
  public static long[] of(int[] tokens, int blockTokens) {
    if (blockTokens <= 0) {
      throw new IllegalArgumentException("blockTokens must be positive, got " + blockTokens);
    }
    int blocks = (int) ((tokens.length + (long) blockTokens - 1) / blockTokens);
    long[] ids = new long[blocks];
    long parent = 0x6A09E667F3BCC909L;
    for (int b = 0; b < blocks; b++) {
      int start = b * blockTokens;
      int end = Math.min(tokens.length, start + blockTokens);
      long h = TokenExpander.mix64(parent ^ (end - start));
      for (int i = start; i < end; i++) {
        h = TokenExpander.mix64(h + tokens[i]);
      }
      ids[b] = h;
      parent = h;
    }
    return ids;
  }
}
