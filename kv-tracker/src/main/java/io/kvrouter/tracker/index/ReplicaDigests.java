package io.kvrouter.tracker.index;

import static io.kvrouter.tracker.index.PrefixIndex.MAX_REPLICAS;

/**
 * Per replica, the count and sum of mixed (key, tier) pairs of the blocks it holds by engine
 * events: an order-independent digest that two trackers fed the same events agree on.
 *
 * <p>Cost: 16 bytes per possible replica; O(1) per (block, tier) added or removed. Not thread-safe:
 * owned by one {@link PrefixIndex}.
 */
final class ReplicaDigests {

  private static final long[] TIER_SALT = {
    0x243F6A8885A308D3L, 0x13198A2E03707344L, 0xA4093822299F31D0L
  };

  private final long[] count = new long[MAX_REPLICAS];
  private final long[] sum = new long[MAX_REPLICAS];

  /** Adds {@code key} in each tier of {@code bits} (GPU=1, CPU=2, DISK=4). */
  void add(int replica, long key, int bits) {
    for (int t = 0; t < 3; t++) {
      if ((bits & (1 << t)) != 0) {
        count[replica]++;
        sum[replica] += Hashing.mix64(key ^ TIER_SALT[t]);
      }
    }
  }

  /** Removes {@code key} in each tier of {@code bits}. */
  void remove(int replica, long key, int bits) {
    for (int t = 0; t < 3; t++) {
      if ((bits & (1 << t)) != 0) {
        count[replica]--;
        sum[replica] -= Hashing.mix64(key ^ TIER_SALT[t]);
      }
    }
  }

  /** True when {@code replica} holds nothing. */
  boolean empty(int replica) {
    return count[replica] == 0;
  }

  void clear(int replica) {
    count[replica] = 0;
    sum[replica] = 0;
  }

  /** (block, tier) holdings per replica; the caller must not mutate it. */
  long[] counts() {
    return count;
  }

  ReplicaDigest of(int replica) {
    return new ReplicaDigest(count[replica], sum[replica]);
  }
}
