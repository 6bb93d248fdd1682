package io.kvrouter.tracker.index;

/**
 * Mixing and slot arithmetic shared by the open-addressing tables of this package.
 *
 * <p>Implementation notes: slots are chosen by Fibonacci hashing (multiply by 2^64/phi, keep the
 * high bits; Knuth, TAOCP vol. 3, 6.4) followed by Lemire's multiply-shift range reduction ("A fast
 * alternative to the modulo reduction", 2016), which lets a table have any capacity, so tables grow
 * by 1.5x instead of 2x and waste less memory. {@link #mix64} is the 64-bit finaliser of
 * MurmurHash3 (Austin Appleby, public domain constants), a bijection with full avalanche.
 */
final class Hashing {

  static final long GOLDEN = 0x9E3779B97F4A7C15L;

  private Hashing() {}

  /** Home slot of {@code h} in a table of {@code capacity} slots (capacity < 2^31). */
  static int slot(long h, int capacity) {
    long mixed = h * GOLDEN;
    return (int) (((mixed >>> 32) * capacity) >>> 32);
  }

  /** Cyclic distance from slot {@code from} forward to slot {@code to}. */
  static int distance(int from, int to, int capacity) {
    int d = to - from;
    return d < 0 ? d + capacity : d;
  }

  /** MurmurHash3's fmix64: a bijective 64-bit mixer with full avalanche. */
  static long mix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  /** Next capacity when a table of {@code capacity} slots is full: 1.5x, at least 16. */
  static int grow(int capacity) {
    long next = Math.max(16L, capacity + (capacity >>> 1));
    if (next > (1 << 30)) {
      throw new IllegalStateException("table capacity exhausted at " + capacity + " slots");
    }
    return (int) next;
  }

  /** Capacity for {@code expected} entries at the given maximum load. */
  static int capacityFor(int expected, double maxLoad) {
    return Math.max(16, (int) Math.ceil(expected / maxLoad) + 1);
  }
}
