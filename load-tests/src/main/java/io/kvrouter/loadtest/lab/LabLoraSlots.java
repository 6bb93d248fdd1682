package io.kvrouter.loadtest.lab;

import java.util.LinkedHashMap;

/**
 * The LoRA adapters a {@link LabEngine} holds loaded: at most {@code slots} (0: unbounded), the
 * least recently used evicted, as vLLM's cache of adapters in host memory ({@code max_cpu_loras}).
 * A request for an adapter the engine does not hold loads it when admitted. Deviation, stated:
 * vLLM's per-batch limit ({@code max_loras}) is not modelled, so an evicted adapter's running
 * requests go on.
 *
 * <p>Cost: O(1) per use (one access-ordered map). Not thread-safe: one engine owns it.
 */
final class LabLoraSlots {

  private final LinkedHashMap<String, Boolean> loaded = new LinkedHashMap<>(16, 0.75f, true);
  private final int slots;
  private long loads;

  /**
   * @param slots adapters held at most; 0 for no bound
   */
  LabLoraSlots(int slots) {
    if (slots < 0) {
      throw new IllegalArgumentException("adapter slots must be >= 0, was " + slots);
    }
    this.slots = slots;
  }

  /**
   * Touches {@code adapter}, loading it (and evicting the least recently used beyond the slots)
   * when absent.
   *
   * @return true when it had to be loaded now
   */
  boolean use(String adapter) {
    if (adapter == null || loaded.get(adapter) != null) {
      return false;
    }
    loaded.put(adapter, Boolean.TRUE);
    loads++;
    if (slots > 0 && loaded.size() > slots) {
      loaded.remove(loaded.keySet().iterator().next());
    }
    return true;
  }

  /** True when {@code adapter} is loaded now. */
  boolean holds(String adapter) {
    return loaded.containsKey(adapter);
  }

  /** Adapters loaded since start. */
  long loads() {
    return loads;
  }
}
