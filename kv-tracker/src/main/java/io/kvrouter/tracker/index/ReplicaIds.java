package io.kvrouter.tracker.index;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Interns replica target ids ({@code ReplicaInfo.targetId()}) to small ints in {@code [0,
 * PrefixIndex.MAX_REPLICAS)}, the form every table of the tracker uses.
 *
 * <p>Contract: an id keeps its index until {@link #release}; a released index is reused by the next
 * new id (lowest first), so tables sized by {@link #capacity()} stay dense. Not thread-safe. Cost:
 * O(1) expected per lookup (one {@code HashMap} probe on the id string; never on the per-block
 * path).
 */
public final class ReplicaIds {

  private final Map<String, Integer> byId = new HashMap<>();
  private final String[] byIndex = new String[PrefixIndex.MAX_REPLICAS];
  private int capacity;

  /** The index of {@code targetId}, assigning one if it has none. */
  public int intern(String targetId) {
    Integer known = byId.get(targetId);
    if (known != null) {
      return known;
    }
    for (int i = 0; i < PrefixIndex.MAX_REPLICAS; i++) {
      if (byIndex[i] == null) {
        byIndex[i] = targetId;
        byId.put(targetId, i);
        capacity = Math.max(capacity, i + 1);
        return i;
      }
    }
    throw new IllegalStateException("more than " + PrefixIndex.MAX_REPLICAS + " replicas");
  }

  /** The index of {@code targetId}, or -1. */
  public int indexOf(String targetId) {
    Integer known = byId.get(targetId);
    return known == null ? -1 : known;
  }

  /** The id at {@code index}, or {@code null}. */
  public String idOf(int index) {
    return index >= 0 && index < byIndex.length ? byIndex[index] : null;
  }

  /** Forgets {@code targetId}; returns its former index or -1. */
  public int release(String targetId) {
    Integer index = byId.remove(targetId);
    if (index == null) {
      return -1;
    }
    byIndex[index] = null;
    while (capacity > 0 && byIndex[capacity - 1] == null) {
      capacity--;
    }
    return index;
  }

  /** One more than the highest index in use. */
  public int capacity() {
    return capacity;
  }

  /** Interned ids. */
  public int size() {
    return byId.size();
  }

  @Override
  public String toString() {
    return "ReplicaIds" + Arrays.toString(Arrays.copyOf(byIndex, capacity));
  }
}
