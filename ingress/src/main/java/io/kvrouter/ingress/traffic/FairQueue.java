package io.kvrouter.ingress.traffic;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToIntFunction;

/**
 * The order in which waiting requests get their turn: by priority (lower value first, as vLLM's
 * {@code priority} field), then fairly among tenants within a priority, then by rank and age within
 * a tenant. Fairness is first by slots held, then by tokens served. The rank is the attained
 * service of the entry's program (lower first: programs in mid-session ahead of new ones, the least
 * served first, {@code program.ProgramLedger}); entries of equal rank (all of them, without
 * programs) go by age.
 *
 * <p>Slots: among the tenants waiting at a priority, those running the fewest requests for their
 * weight ({@link #started} less {@link #finished}, divided by the weight) go first; the others are
 * passed over in the round, without credit, until the counts even out. Capacity frees one slot at a
 * time, so without this a tenant that waits now and then (a few closed-loop clients) would find a
 * backlogged tenant's entries visited before its own and wait for several slots to free, while
 * holding fewer of them than the backlogged one: each new request of the quiet tenant starts its
 * round with nothing while the backlogged one keeps what its last visit left over ({@code
 * TenantFairnessIT} holds the quiet tenant's wait down).
 *
 * <p>Tokens: among the tenants running equally many, deficit round robin (Shreedhar and Varghese,
 * "Efficient Fair Queuing Using Deficit Round Robin", SIGCOMM 1995) with each entry's cost in
 * tokens: a tenant is served while its deficit covers its oldest entry's cost, gets {@code quantum
 * × weight} more at each visit and loses what is left when it runs empty. A tenant sending ten
 * times the others thus gets its weight's share of the tokens served, not ten times theirs, while
 * any tenant alone gets every turn.
 *
 * <p>The quantum may be far smaller than a request (a small quantum keeps a newly waiting tenant's
 * wait to about one request of each other tenant): when a whole round passes with nobody able to
 * go, the rounds in which still nobody could are credited at once instead of being walked through.
 *
 * <p>When the owner must make room it sheds {@link #victim()}: the newest entry of the tenant with
 * the most entries at the lowest priority (least important), so the lowest priorities go first and,
 * among them, the tenant that holds the most places.
 *
 * <p>Cost: {@link #add} O(log p + log n) for p priority levels and n entries of its tenant; {@link
 * #peek} O(t) over t tenants of the first level (one pass for the slot counts, asking {@code
 * elsewhere} once per tenant, then at most two rounds: one to find nobody can go, one after
 * crediting the rest); {@link #started} and {@link #finished} O(1); {@link #remove} O(log n) in the
 * entry's tenant queue; {@link #victim} O(t) over the last level. Not thread-safe.
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
    private final double weight;
    private final double rank;
    private final long seq;

    private Entry(
        T value, int priority, String tenant, long cost, double weight, double rank, long seq) {
      this.value = value;
      this.priority = priority;
      this.tenant = tenant;
      this.cost = cost;
      this.weight = weight;
      this.rank = rank;
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
  private final ToIntFunction<String> elsewhere;
  private final TreeMap<Integer, Level<T>> levels = new TreeMap<>();

  /** Requests running per tenant (only tenants with at least one). */
  private final Map<String, Integer> running = new HashMap<>();

  private long nextSeq;
  private int size;

  /**
   * @param quantum cost credited to a tenant of weight 1 per round (tokens), at least 1
   */
  public FairQueue(long quantum) {
    this(quantum, t -> 0);
  }

  /**
   * @param quantum cost credited to a tenant of weight 1 per round (tokens), at least 1
   * @param elsewhere requests a tenant runs beyond those {@link #started} here (at the other
   *     ingresses), counted in its slot share
   */
  public FairQueue(long quantum, ToIntFunction<String> elsewhere) {
    if (quantum < 1) {
      throw new IllegalArgumentException("quantum must be >= 1, was " + quantum);
    }
    this.quantum = quantum;
    this.elsewhere = elsewhere;
  }

  /**
   * Adds {@code value} behind the entries of its tenant at its priority.
   *
   * @param cost what serving it costs (tokens), at least 1
   * @param weight the tenant's share, positive (its quantum is {@code quantum × weight})
   */
  public Entry<T> add(T value, int priority, String tenant, long cost, double weight) {
    return add(value, priority, tenant, cost, weight, 0);
  }

  /**
   * Adds {@code value} among the entries of its tenant at its priority, behind those of lower or
   * equal {@code rank}.
   *
   * @param rank its program's attained service (lower goes first), finite
   */
  public Entry<T> add(T value, int priority, String tenant, long cost, double weight, double rank) {
    if (!(weight > 0)) {
      throw new IllegalArgumentException("weight must be positive, was " + weight);
    }
    if (!Double.isFinite(rank)) {
      throw new IllegalArgumentException("rank must be finite, was " + rank);
    }
    Entry<T> e = new Entry<>(value, priority, tenant, Math.max(1, cost), weight, rank, nextSeq++);
    levels.computeIfAbsent(priority, p -> new Level<>()).add(e, weight);
    size++;
    return e;
  }

  /** The entry to serve next, or null when empty. Advances the round past tenants it skips. */
  public Entry<T> peek() {
    return levels.isEmpty() ? null : levels.firstEntry().getValue().peek(quantum, this::everywhere);
  }

  /**
   * A request of {@code tenant} took a slot (whether it waited here or not): until {@link
   * #finished}, it counts against its tenant's turns.
   */
  public void started(String tenant) {
    running.merge(tenant, 1, Integer::sum);
  }

  /** A request of {@code tenant} that {@link #started} gave its slot back. */
  public void finished(String tenant) {
    running.computeIfPresent(tenant, (t, n) -> n > 1 ? n - 1 : null);
  }

  /** Requests of {@code tenant} started and not finished. */
  public int running(String tenant) {
    return running.getOrDefault(tenant, 0);
  }

  /** Requests started and not finished, per tenant (a copy; only tenants with at least one). */
  public Map<String, Integer> running() {
    return Map.copyOf(running);
  }

  /**
   * The slot share of {@code e}'s tenant: the requests it runs, here and elsewhere, per unit of its
   * weight (what {@link #peek} serves the lowest of first).
   */
  public double share(Entry<T> e) {
    return everywhere(e.tenant) / e.weight;
  }

  /** {@code tenant}'s slot share with {@code extra} more requests running, at {@code weight}. */
  public double share(String tenant, double weight, int extra) {
    return (everywhere(tenant) + extra) / weight;
  }

  /** Requests of {@code tenant} running here and elsewhere: what its slot share counts. */
  private int everywhere(String tenant) {
    return running.getOrDefault(tenant, 0) + elsewhere.applyAsInt(tenant);
  }

  /** The tenants waiting at the most pressing priority, each with its weight; empty when none. */
  public Map<String, Double> firstTenants() {
    if (levels.isEmpty()) {
      return Map.of();
    }
    Map<String, Double> out = new HashMap<>();
    for (TenantQueue<T> q : levels.firstEntry().getValue().round) {
      out.put(q.tenant, q.weight);
    }
    return out;
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

  /** Nothing waits and nothing runs: the queue holds no state worth keeping. */
  public boolean isIdle() {
    return size == 0 && running.isEmpty();
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
      q.entries.add(e);
    }

    Entry<T> peek(long quantum, ToIntFunction<String> running) {
      double least = Double.POSITIVE_INFINITY;
      for (TenantQueue<T> q : round) {
        q.share = running.applyAsInt(q.tenant) / q.weight;
        least = Math.min(least, q.share);
      }
      int eligible = 0;
      for (TenantQueue<T> q : round) {
        if (q.share <= least) {
          eligible++;
        }
      }
      int skipped = 0;
      while (true) {
        TenantQueue<T> q = round.peekFirst();
        if (q.share > least) {
          // It holds more slots than another waiting tenant: passed over, without credit.
          q.visiting = false;
          round.addLast(round.pollFirst());
          continue;
        }
        if (!q.visiting) {
          q.deficit += quantum * q.weight;
          q.visiting = true;
        }
        Entry<T> head = q.entries.first();
        if (head.cost <= q.deficit) {
          return head;
        }
        q.visiting = false;
        round.addLast(round.pollFirst());
        if (++skipped == eligible) {
          fastForward(quantum, least);
          skipped = 0;
        }
      }
    }

    /**
     * A whole round of the tenants holding the {@code least} share of slots went by with none of
     * them able to go: credits them at once the further rounds in which still none would (each gets
     * the same number of quanta, so the order is DRR's).
     */
    private void fastForward(long quantum, double least) {
      double rounds = Double.POSITIVE_INFINITY;
      for (TenantQueue<T> q : round) {
        if (q.share > least) {
          continue;
        }
        double missing = q.entries.first().cost - q.deficit;
        rounds = Math.min(rounds, Math.ceil(missing / (quantum * q.weight)) - 1);
      }
      if (rounds > 0) {
        for (TenantQueue<T> q : round) {
          if (q.share <= least) {
            q.deficit += rounds * quantum * q.weight;
          }
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
                && q.entries.last().seq > largest.entries.last().seq)) {
          largest = q;
        }
      }
      return largest.entries.last();
    }

    int count(String tenant) {
      TenantQueue<T> q = tenants.get(tenant);
      return q == null ? 0 : q.entries.size();
    }

    boolean isEmpty() {
      return round.isEmpty();
    }
  }

  /** By rank, then by age. */
  private static final Comparator<Entry<?>> ORDER =
      Comparator.<Entry<?>>comparingDouble(e -> e.rank).thenComparingLong(e -> e.seq);

  /** One tenant's entries at one priority, by rank and then oldest first. */
  private static final class TenantQueue<T> {
    final String tenant;
    final TreeSet<Entry<T>> entries = new TreeSet<>(ORDER);
    double weight = 1;
    double deficit;
    boolean visiting;

    /** Its running requests per unit of weight, as of the latest {@link Level#peek}. */
    double share;

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
