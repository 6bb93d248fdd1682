package io.kvrouter.loadtest.bench;

/**
 * How the bench spreads requests over several target URLs.
 *
 * <p>{@link #ROUND_ROBIN} is the neutral choice for several ingresses of one router (each ingress
 * then routes by itself), and the cache-blind baseline when the targets are engines. {@link
 * #GROUP_AFFINITY} sends every request of a group (shared prefix, session) to the same target,
 * chosen by a hash of the group name: when the targets are engines this is the client-side
 * reference for what prefix-aware routing can reach on a workload whose groups are known, ignoring
 * load. Requests without a group fall back to round robin.
 */
public enum TargetPolicy {
  /** Target {@code i mod n} for the {@code i}-th request sent. */
  ROUND_ROBIN,
  /** Target {@code hash(group) mod n}; round robin for requests with an empty group. */
  GROUP_AFFINITY;

  /**
   * The target index for the {@code sent}-th request sent, of group {@code group}, among {@code n}.
   */
  int pick(int sent, String group, int n) {
    if (this == GROUP_AFFINITY && !group.isEmpty()) {
      return Math.floorMod(mix(group.hashCode()), n);
    }
    return Math.floorMod(sent, n);
  }

  /** Murmur3's 32-bit finalizer, so that similar names ("g1", "g2") spread over targets. */
  private static int mix(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return h;
  }
}
