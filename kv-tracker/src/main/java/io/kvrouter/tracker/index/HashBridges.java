package io.kvrouter.tracker.index;

import static io.kvrouter.tracker.index.PrefixIndex.MAX_REPLICAS;

/**
 * Per replica, the bridge from engine block hashes to router keys: engines name blocks by their own
 * hash in removals, the index by router key. The latest mapping of a hash wins (engines that hash
 * pages without chaining, such as old SGLang, reuse hashes). Counts its entries over all replicas
 * ({@link #holdings}) for the memory budget's estimate.
 *
 * <p>Cost: one {@link LongLongMap} per replica that stored a block (20 to 30 bytes per entry). Not
 * thread-safe: owned by one {@link PrefixIndex}.
 */
final class HashBridges {

  private final LongLongMap[] bridges = new LongLongMap[MAX_REPLICAS];
  private long holdings;

  /** Maps {@code hash} to {@code key} for {@code replica}. */
  void learn(int replica, long hash, long key) {
    LongLongMap bridge = bridges[replica];
    if (bridge == null) {
      bridge = new LongLongMap(1024);
      bridges[replica] = bridge;
    }
    if (bridge.put(hash, key, 0L) == 0L) {
      holdings++;
    }
  }

  /** True when {@code replica} has a bridge (stored a block since it joined). */
  boolean has(int replica) {
    return bridges[replica] != null;
  }

  /** The key {@code hash} stands for on {@code replica}, 0 if unknown. */
  long keyOf(int replica, long hash) {
    LongLongMap bridge = bridges[replica];
    return bridge == null ? 0L : bridge.get(hash, 0L);
  }

  /** Forgets {@code hash} on {@code replica}. */
  void forget(int replica, long hash) {
    LongLongMap bridge = bridges[replica];
    if (bridge != null && bridge.remove(hash, 0L) != 0L) {
      holdings--;
    }
  }

  /** Forgets, per replica, every hash whose key is in {@code keys[replica]} (null: none). */
  void forgetKeys(LongLongMap[] keys) {
    for (int r = 0; r < MAX_REPLICAS; r++) {
      if (keys[r] != null && bridges[r] != null) {
        holdings -= bridges[r].removeIfValueIn(keys[r]);
      }
    }
  }

  /** Forgets every hash of {@code replica}, keeping its (empty) bridge. */
  void clear(int replica) {
    LongLongMap bridge = bridges[replica];
    if (bridge != null) {
      holdings -= bridge.size();
      bridge.clear();
    }
  }

  /** Forgets {@code replica}'s bridge. */
  void drop(int replica) {
    clear(replica);
    bridges[replica] = null;
  }

  /** Engine hashes the bridge of {@code replica} knows. */
  int size(int replica) {
    LongLongMap bridge = bridges[replica];
    return bridge == null ? 0 : bridge.size();
  }

  /** Entries over all replicas. */
  long holdings() {
    return holdings;
  }
}
