package io.kvrouter.agent.kvevents;

import net.openhft.hashing.LongHashFunction;

/**
 * The seqs and payload digests of the last {@code capacity} batches delivered, oldest first: what
 * an audit compares with the engine's replay buffer, and what pins the checkpoint of an
 * interruption.
 *
 * <p>Cost: O(1) per add, O(capacity) per lookup (a handful of entries); two longs per entry. Not
 * thread-safe.
 */
final class DeliveredDigests {

  private static final LongHashFunction XXH3 = LongHashFunction.xx3();

  private final long[] seqs;
  private final long[] digests;
  private int start;
  private int size;

  DeliveredDigests(int capacity) {
    seqs = new long[capacity];
    digests = new long[capacity];
  }

  /** The digest a payload is compared by (XXH3-64 of its bytes). */
  static long digest(byte[] payload) {
    return XXH3.hashBytes(payload);
  }

  void add(long seq, long digest) {
    int i = (start + size) % seqs.length;
    if (size == seqs.length) {
      start = (start + 1) % seqs.length;
    } else {
      size++;
    }
    seqs[i] = seq;
    digests[i] = digest;
  }

  /** The digest delivered under {@code seq}, or null when it is not among the last ones. */
  Long digestOf(long seq) {
    for (int k = 0; k < size; k++) {
      int i = (start + k) % seqs.length;
      if (seqs[i] == seq) {
        return digests[i];
      }
    }
    return null;
  }

  boolean isEmpty() {
    return size == 0;
  }

  long oldestSeq() {
    return seqs[start];
  }

  long newestSeq() {
    return seqs[(start + size - 1) % seqs.length];
  }

  long newestDigest() {
    return digests[(start + size - 1) % seqs.length];
  }

  void clear() {
    start = 0;
    size = 0;
  }
}
