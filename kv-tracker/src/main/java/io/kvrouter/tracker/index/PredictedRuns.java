package io.kvrouter.tracker.index;

import java.util.Arrays;
import java.util.PriorityQueue;

/**
 * Predicted entries as runs: each reservation predicts that one replica will hold a run of
 * consecutive prompt blocks (the keys of the {@code Reserved} event, in prompt order) until a
 * deadline. Runs are found by their first key; {@link PrefixIndex#match} follows a run by comparing
 * the prompt's keys with the run's, one array element after the other.
 *
 * <p>Contract: a run covers, for a prompt walk that reaches its first key with the replica still in
 * the run, the longest common prefix of the prompt's remaining keys and the run's keys. A run ends
 * at its deadline ({@link #expire}), which {@link #retire} may bring forward, or when its replica
 * is dropped. Adding a run identical to a live one of the same replica extends that one's deadline;
 * adding one that extends a live run (the live one is a prefix of it) with a deadline no earlier
 * replaces it. Both leave what is covered, at every future time, exactly as keeping the runs apart
 * would.
 *
 * <p>Cost: add O(run length) for the comparison with runs of the same start (sequential memory);
 * expiry O(log runs) per run; lookup by start key O(1) expected. Memory: about 80 bytes per run
 * plus the key array, which is the event's own (never copied, never mutated).
 *
 * <p>Implementation notes: per-block predicted entries (one hash-table insert and one delete per
 * predicted block) cost more than the match itself on long prompts; a run costs O(1) table work
 * whatever its length. Heads of runs sharing a start key form a singly linked chain, found through
 * an open-addressing table from start key to chain head (parallel arrays, linear probing,
 * backward-shift deletion). Expiry uses a priority queue with lazy deletion: an entry acts only if
 * its run is still live with that very deadline.
 */
final class PredictedRuns {

  /** One predicted run. Fields are read by the match loop. */
  static final class Run {
    final int replica;
    long[] keys;
    int from;
    int to;
    long deadline;
    Run next;
    boolean live = true;

    Run(int replica, long[] keys, int from, int to, long deadline) {
      this.replica = replica;
      this.keys = keys;
      this.from = from;
      this.to = to;
      this.deadline = deadline;
    }

    int length() {
      return to - from;
    }
  }

  private record Due(long deadline, Run run) {}

  private static final double MAX_LOAD = 0.75;

  private long[] starts;
  private Run[] heads;
  private int capacity;
  private int used;
  private int threshold;
  private int runs;
  private final PriorityQueue<Due> due =
      new PriorityQueue<>((a, b) -> Long.compare(a.deadline, b.deadline));

  PredictedRuns() {
    allocate(64);
  }

  private void allocate(int newCapacity) {
    capacity = newCapacity;
    starts = new long[newCapacity];
    heads = new Run[newCapacity];
    threshold = (int) (newCapacity * MAX_LOAD);
  }

  /** Live runs. */
  int size() {
    return runs;
  }

  /** The first of the live runs starting with {@code key}, or null; follow {@link Run#next}. */
  Run first(long key) {
    if (runs == 0) {
      return null;
    }
    int i = Hashing.slot(key, capacity);
    while (true) {
      long probe = starts[i];
      if (probe == key) {
        return heads[i];
      }
      if (probe == 0L) {
        return null;
      }
      if (++i == capacity) {
        i = 0;
      }
    }
  }

  /** Length of the common prefix of {@code a[ai, aEnd)} and {@code run}'s keys. */
  static int common(long[] a, int ai, int aEnd, Run run) {
    int n = Math.min(aEnd - ai, run.to - run.from);
    int mismatch = Arrays.mismatch(a, ai, ai + n, run.keys, run.from, run.from + n);
    return mismatch < 0 ? n : mismatch;
  }

  void add(int replica, long[] keys, int from, int to, long deadline) {
    long start = keys[from];
    for (Run r = first(start); r != null; r = r.next) {
      if (r.replica != replica) {
        continue;
      }
      int c = common(keys, from, to, r);
      if (c == to - from && c == r.length()) {
        if (deadline > r.deadline) {
          r.deadline = deadline;
          due.add(new Due(deadline, r));
        }
        return;
      }
      if (c == r.length() && deadline >= r.deadline) {
        r.keys = keys;
        r.from = from;
        r.to = to;
        if (deadline > r.deadline) {
          r.deadline = deadline;
          due.add(new Due(deadline, r));
        }
        return;
      }
    }
    Run run = new Run(replica, keys, from, to, deadline);
    link(start, run);
    runs++;
    due.add(new Due(deadline, run));
  }

  private void link(long start, Run run) {
    if (used >= threshold) {
      rehash(capacity * 2);
    }
    int i = Hashing.slot(start, capacity);
    while (true) {
      long probe = starts[i];
      if (probe == start) {
        run.next = heads[i];
        heads[i] = run;
        return;
      }
      if (probe == 0L) {
        starts[i] = start;
        heads[i] = run;
        used++;
        return;
      }
      if (++i == capacity) {
        i = 0;
      }
    }
  }

  private void unlink(Run run) {
    long start = run.keys[run.from];
    int i = Hashing.slot(start, capacity);
    while (starts[i] != start) {
      if (++i == capacity) {
        i = 0;
      }
    }
    if (heads[i] == run) {
      heads[i] = run.next;
    } else {
      Run prev = heads[i];
      while (prev.next != run) {
        prev = prev.next;
      }
      prev.next = run.next;
    }
    run.live = false;
    runs--;
    if (heads[i] == null) {
      removeSlot(i);
    }
  }

  private void removeSlot(int hole) {
    int j = hole;
    while (true) {
      if (++j == capacity) {
        j = 0;
      }
      long key = starts[j];
      if (key == 0L) {
        break;
      }
      int home = Hashing.slot(key, capacity);
      if (Hashing.distance(home, j, capacity) >= Hashing.distance(hole, j, capacity)) {
        starts[hole] = key;
        heads[hole] = heads[j];
        hole = j;
      }
    }
    starts[hole] = 0L;
    heads[hole] = null;
    used--;
  }

  private void rehash(int newCapacity) {
    long[] oldStarts = starts;
    Run[] oldHeads = heads;
    allocate(newCapacity);
    used = 0;
    for (int i = 0; i < oldStarts.length; i++) {
      if (oldStarts[i] != 0L) {
        int j = Hashing.slot(oldStarts[i], capacity);
        while (starts[j] != 0L) {
          if (++j == capacity) {
            j = 0;
          }
        }
        starts[j] = oldStarts[i];
        heads[j] = oldHeads[i];
        used++;
      }
    }
  }

  /**
   * Brings the deadline of every live run of {@code replica} that starts with {@code keys[from]}
   * and shares at least that key with {@code keys[from, to)} forward to {@code deadline} (a later
   * deadline is left as it is). O(runs with that start key + their common prefix).
   */
  void retire(int replica, long[] keys, int from, int to, long deadline) {
    for (Run r = first(keys[from]); r != null; r = r.next) {
      if (r.replica == replica && deadline < r.deadline && common(keys, from, to, r) > 0) {
        r.deadline = deadline;
        due.add(new Due(deadline, r));
      }
    }
  }

  /** Ends every run whose deadline is at or before {@code nowMillis}; returns how many. */
  int expire(long nowMillis) {
    int ended = 0;
    Due d;
    while ((d = due.peek()) != null && d.deadline <= nowMillis) {
      due.poll();
      if (d.run.live && d.run.deadline == d.deadline) {
        unlink(d.run);
        ended++;
      }
    }
    return ended;
  }

  /** Ends every run of {@code replica}. O(table capacity + runs). */
  void dropReplica(int replica) {
    java.util.List<Run> doomed = new java.util.ArrayList<>();
    for (int i = 0; i < capacity; i++) {
      for (Run r = heads[i]; r != null; r = r.next) {
        if (r.replica == replica) {
          doomed.add(r);
        }
      }
    }
    doomed.forEach(this::unlink);
  }
}
