package io.kvrouter.tracker.index;

/**
 * Order-independent digest of the blocks one replica holds by engine events: how many (block, tier)
 * holdings, and the wrapping sum of a 64-bit mix of each. Two trackers that applied the same events
 * to a replica hold equal digests; unequal digests prove the states differ, and equal digests of
 * unequal states need a 64-bit sum collision.
 */
public record ReplicaDigest(long count, long sum) {

  /** The digest of a replica holding nothing. */
  public static final ReplicaDigest EMPTY = new ReplicaDigest(0, 0);
}
