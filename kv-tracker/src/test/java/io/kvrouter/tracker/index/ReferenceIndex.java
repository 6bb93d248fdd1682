package io.kvrouter.tracker.index;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * A plainly correct model of {@link PrefixIndex} made of boxed maps and sets: the oracle of the
 * property tests. It states the contract of the index once more, in the slowest clear way.
 */
final class ReferenceIndex {

  final Map<Integer, Map<Long, EnumSet<Tier>>> real = new HashMap<>();
  final Map<Integer, Map<Long, Long>> bridge = new HashMap<>();

  /** Predicted runs per replica: keys in prompt order and a deadline, never merged. */
  final Map<Integer, java.util.List<Run>> predicted = new HashMap<>();

  record Run(long[] keys, long deadline) {}

  private Map<Long, EnumSet<Tier>> real(int r) {
    return real.computeIfAbsent(r, x -> new HashMap<>());
  }

  void store(int r, BlocksStored e) {
    Map<Long, Long> b = bridge.computeIfAbsent(r, x -> new HashMap<>());
    for (int i = 0; i < e.blockKeys().length; i++) {
      long key = e.blockKeys()[i];
      b.put(e.engineHashes()[i], key);
      real(r).computeIfAbsent(key, x -> EnumSet.noneOf(Tier.class)).add(e.tier());
    }
  }

  void remove(int r, BlocksRemoved e) {
    Map<Long, Long> b = bridge.get(r);
    if (b == null) {
      return;
    }
    for (long h : e.engineHashes()) {
      Long key = b.get(h);
      if (key == null) {
        continue;
      }
      EnumSet<Tier> tiers = real(r).get(key);
      if (tiers != null) {
        tiers.remove(e.tier());
      }
      if (tiers == null || tiers.isEmpty()) {
        real(r).remove(key);
        b.remove(h);
      }
    }
  }

  void clear(int r) {
    real.remove(r);
    bridge.remove(r);
  }

  void drop(int r) {
    clear(r);
    predicted.remove(r);
  }

  void predict(int r, long[] keys, long deadline) {
    if (keys.length > 0) {
      predicted.computeIfAbsent(r, x -> new java.util.ArrayList<>()).add(new Run(keys, deadline));
    }
  }

  void expire(long now) {
    for (java.util.List<Run> runs : predicted.values()) {
      runs.removeIf(run -> run.deadline() <= now);
    }
  }

  /** Real holdings of {@code r}, without empty sets, for state comparison. */
  Map<Long, Set<Tier>> state(int r) {
    Map<Long, Set<Tier>> out = new HashMap<>();
    real.getOrDefault(r, Map.of())
        .forEach(
            (k, v) -> {
              if (!v.isEmpty()) {
                out.put(k, EnumSet.copyOf(v));
              }
            });
    return out;
  }

  /** The expected match of one replica: {matched, gpu, predicted, cpu, disk, gpuLeading}. */
  int[] match(int r, long[] keys) {
    int[] m = new int[6];
    boolean gpuRun = true;
    int coveredUntil = 0;
    for (int b = 0; b < keys.length; b++) {
      long key = keys[b];
      for (Run run : predicted.getOrDefault(r, java.util.List.of())) {
        if (run.keys()[0] == key) {
          int c = 0;
          while (b + c < keys.length && c < run.keys().length && keys[b + c] == run.keys()[c]) {
            c++;
          }
          coveredUntil = Math.max(coveredUntil, b + c);
        }
      }
      EnumSet<Tier> tiers = real.getOrDefault(r, Map.of()).get(key);
      boolean pred = coveredUntil > b;
      boolean any = (tiers != null && !tiers.isEmpty()) || pred;
      if (!any) {
        break;
      }
      m[0]++;
      if (tiers != null && tiers.contains(Tier.GPU)) {
        m[1]++;
      } else if (pred) {
        m[2]++;
      } else if (tiers.contains(Tier.CPU)) {
        m[3]++;
      } else {
        m[4]++;
      }
      gpuRun &= tiers != null && tiers.contains(Tier.GPU);
      if (gpuRun) {
        m[5]++;
      }
    }
    return m;
  }
}
