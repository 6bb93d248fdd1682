package io.kvrouter.ingress.traffic;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The order in which waiting requests get their turn: by priority (lower value first, as vLLM's
 * {@code priority} field), then fairly among tenants within a priority, then by age within a
 * tenant. Fairness is deficit round robin (Shreedhar and Varghese, "Efficient Fair Queuing Using
 * Deficit Round Robin", SIGCOMM 1995) with each entry's cost in tokens: a tenant is served while
 * its deficit covers its oldest entry's cost, gets {@code quantum × weight} more at each visit and
 * loses what is left when it runs empty. A tenant sending ten times the others thus gets its
 * weight's share of the tokens served, not ten times theirs, while any tenant alone gets every
 * turn.
 *
 * <p>The quantum may be far smaller than a request (a small quantum keeps a newly waiting tenant's
 * wait to about one request of each other tenant): when a whole round passes with nobody able to
 * go, the rounds in which still nobody could are credited at once instead of being walked through.
 *
 * <p>When the owner must make room it sheds {@link #victim()}: the newest entry of the tenant with
 * the most entries at the lowest priority (least important), so the lowest priorities go first and,
 * among them, the tenant that holds the most places.
 *
 * <p>Cost: {@link #add} O(log p) for p priority levels; {@link #peek} O(t) over t tenants of the
 * first level (at most two rounds: one to find nobody can go, one after crediting the rest); {@link
 * #remove} O(n) in the entry's tenant queue; {@link #victim} O(t) over the last level. Not
 * thread-safe.
 *
 * @param <T> what waits
 */
public final class FairQueue<T> {

  /** One waiting item. */
  public static final class Entry<T> {
    private final T value;
    private final int priority;
    private final String tenant;
    private final long cost;
    private final long seq;

    private Entry(T value, int priority, String tenant, long cost, long seq) {
      this.value = value;
      this.priority = priority;
      this.tenant = tenant;
      this.cost = cost;
      this.seq = seq;
    }

    public T value() {
      return value;
    }

    public int priority() {
      return priority;
    }

    public String tenant() {
      return tenant;
    }

    @Override
    public String toString() {
      return "Entry[" + value + ", priority " + priority + ", " + tenant + ", cost " + cost + "]";
    }
  }

  private final long quantum;
  private final TreeMap<Integer, Level<T>> levels = new TreeMap<>();
  private long nextSeq;
  private int size;

  /**
   * @param quantum cost credited to a tenant of weight 1 per round (tokens), at least 1
   */
  public FairQueue(long quantum) {
    if (quantum < 1) {
      throw new IllegalArgumentException("quantum must be >= 1, was " + quantum);
    }
    this.quantum = quantum;
  }

  /**
   * Adds {@code value} behind the entries of its tenant at its priority.
   *
   * @param cost what serving it costs (tokens), at least 1
   * @param weight the tenant's share, positive (its quantum is {@code quantum × weight})
   */
  public Entry<T> add(T value, int priority, String tenant, long cost, double weight) {
    if (!(weight > 0)) {
      throw new IllegalArgumentException("weight must be positive, was " + weight);
    }
    Entry<T> e = new Entry<>(value, priority, tenant, Math.max(1, cost), nextSeq++);
    levels.computeIfAbsent(priority, p -> new Level<>()).add(e, weight);
    size++;
    return e;
  }

  /** The entry to serve next, or null when empty. Advances the round past tenants it skips. */
  public Entry<T> peek() {
    return levels.isEmpty() ? null : levels.firstEntry().getValue().peek(quantum);
  }

  /**
   * Removes {@code e}. When it was served ({@code served}), its cost is charged to its tenant's
   * deficit; an entry that gave up or was shed costs nothing. False when it was not queued.
   */
  public boolean remove(Entry<T> e, boolean served) {
    Level<T> level = levels.get(e.priority);
    if (level == null || !level.remove(e, served)) {
      return false;
    }
    if (level.isEmpty()) {
      levels.remove(e.priority);
    }
    size--;
    return true;
  }

  /**
   * The entry to shed to make room: the newest of the tenant with the most entries at the lowest
   * priority (the highest value); null when empty.
   */
  public Entry<T> victim() {
    return levels.isEmpty() ? null : levels.lastEntry().getValue().victim();
  }

  /** The most pressing priority waiting, or null when empty. */
  public Integer firstPriority() {
    return levels.isEmpty() ? null : levels.firstKey();
  }

  /** Entries of {@code tenant} waiting at {@code priority}. */
  public int count(int priority, String tenant) {
    Level<T> level = levels.get(priority);
    return level == null ? 0 : level.count(tenant);
  }

  public int size() {
    return size;
  }

  public boolean isEmpty() {
    return size == 0;
  }

  /** The tenants of one priority level in round order, each with its deficit. */
  private static final class Level<T> {
    private final Map<String, TenantQueue<T>> tenants = new HashMap<>();
    private final ArrayDeque<TenantQueue<T>> round = new ArrayDeque<>();

    void add(Entry<T> e, double weight) {
      TenantQueue<T> q = tenants.get(e.tenant);
      if (q == null) {
        q = new TenantQueue<>(e.tenant);
        tenants.put(e.tenant, q);
        round.addLast(q);
      }
      q.weight = weight;
      q.entries.addLast(e);
    }

    Entry<T> peek(long quantum) {
      int skipped = 0;
      while (true) {
        TenantQueue<T> q = round.peekFirst();
        if (!q.visiting) {
          q.deficit += quantum * q.weight;
          q.visiting = true;
        }
        Entry<T> head = q.entries.peekFirst();
        if (head.cost <= q.deficit) {
          return head;
        }
        q.visiting = false;
        round.addLast(round.pollFirst());
        if (++skipped == round.size()) {
          fastForward(quantum);
          skipped = 0;
        }
      }
    }

    /**
     * A whole round went by with nobody able to go: credits at once the further rounds in which
     * still nobody would (every tenant gets the same number of quanta, so the order is DRR's).
     */
    private void fastForward(long quantum) {
      double rounds = Double.POSITIVE_INFINITY;
      for (TenantQueue<T> q : round) {
        double missing = q.entries.peekFirst().cost - q.deficit;
        rounds = Math.min(rounds, Math.ceil(missing / (quantum * q.weight)) - 1);
      }
      if (rounds > 0) {
        for (TenantQueue<T> q : round) {
          q.deficit += rounds * quantum * q.weight;
        }
      }
    }

    boolean remove(Entry<T> e, boolean served) {
      TenantQueue<T> q = tenants.get(e.tenant);
      if (q == null || !q.entries.remove(e)) {
        return false;
      }
      if (served) {
        q.deficit -= e.cost;
      }
      if (q.entries.isEmpty()) {
        tenants.remove(e.tenant);
        round.remove(q);
      }
      return true;
    }

    Entry<T> victim() {
      TenantQueue<T> largest = null;
      for (TenantQueue<T> q : round) {
        if (largest == null
            || q.entries.size() > largest.entries.size()
            || (q.entries.size() == largest.entries.size()
                && q.entries.peekLast().seq > largest.entries.peekLast().seq)) {
          largest = q;
        }
      }
      return largest.entries.peekLast();
    }

    int count(String tenant) {
      TenantQueue<T> q = tenants.get(tenant);
      return q == null ? 0 : q.entries.size();
    }

    boolean isEmpty() {
      return round.isEmpty();
    }
  }

  /** One tenant's entries at one priority, oldest first. */
  private static final class TenantQueue<T> {
    final String tenant;
    final ArrayDeque<Entry<T>> entries = new ArrayDeque<>();
    double weight = 1;
    double deficit;
    boolean visiting;

    TenantQueue(String tenant) {
      this.tenant = tenant;
    }
  }

  /** Every entry, in no particular order (for draining). */
  public Iterator<Entry<T>> iterator() {
    java.util.List<Entry<T>> all = new java.util.ArrayList<>(size);
    for (Level<T> level : levels.values()) {
      for (TenantQueue<T> q : level.round) {
        all.addAll(q.entries);
      }
    }
    return all.iterator();
  }
}
