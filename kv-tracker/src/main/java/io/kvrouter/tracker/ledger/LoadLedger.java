package io.kvrouter.tracker.ledger;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import net.openhft.hashing.LongHashFunction;

/**
 * The load ledger: per replica, what reservations claim (in-flight requests, prefill tokens not yet
 * prefilled, decode tokens) and what the engine last reported (queue depth, running, KV usage); per
 * request, the reservation with its lease; per origin ingress, a digest.
 *
 * <p>Contract: every lifecycle call is idempotent and keyed by (origin, request id): a second
 * {@link #reserve} of the same request is ignored, {@link #prefillCompleted} moves the
 * reservation's prompt tokens from prefill to decode once, {@link #release} returns everything
 * once. A reservation whose lease passes before it is released is dropped by {@link #expire}.
 * Counters never go negative. Not thread-safe.
 *
 * <p>A reservation names its replica by target id, and the origin digests use that id, so an
 * origin's digest is a function of the reservation events applied and nothing else
 * (ARCHITECTURE.md, "Consistency, stated"): what this tracker knows of the replicas never changes
 * it. A reservation on a replica this tracker does not know (its announcement has not arrived, or
 * it left) is held <em>detached</em>: in its origin's digest, on no replica's load, until the
 * replica's id gets an index again ({@link #attachReplica}); {@link #detachReplica} does the
 * reverse when a replica leaves. Only the origin ends a reservation (its {@code Released}, or its
 * lease).
 *
 * <p>Cost: O(1) expected per lifecycle call (one hash lookup) plus O(log n) for the lease queue;
 * about 200 bytes per open reservation; per replica 64 bytes of counters.
 *
 * <p>Over 400 lines because the per-replica counters, the reservations and the origin digests
 * change together in every lifecycle call (a reservation moves all three at once, detached or
 * attached); kept as one owner so no call can update one and not the others.
 */
public final class LoadLedger implements LoadView {

  private static final long[] NO_KEYS = new long[0];

  /** The lease deadline of a reservation that only an explicit release ends. */
  public static final long NO_LEASE = Long.MAX_VALUE;

  /*
   * Implementation notes. Per-replica counters are dense arrays indexed by replica index, grown
   * on demand. Reservations sit in a HashMap keyed by (origin, requestId): one entry per request,
   * never per block, so boxing is no concern here. Leases live in a PriorityQueue by deadline with
   * lazy deletion: an entry is acted on only if the reservation it names still has that deadline.
   * The origin digest adds mix(reservation) on reserve and subtracts it on release, expiry or a
   * phase change, so it is a function of the set of open reservations only; it mixes what one
   * weighs, not its name (the origin's is its request id, a peer's may be its seq). Detached
   * reservations are also listed by replica id, so attaching is O(1) when a replica has none.
   */

  private static final LongHashFunction HASH = LongHashFunction.xx3(0x4c656467L);

  private final Map<Key, Reservation> reservations = new HashMap<>();
  private final PriorityQueue<Lease> leases =
      new PriorityQueue<>((a, b) -> Long.compare(a.deadline, b.deadline));
  private final Map<String, long[]> originDigests = new HashMap<>();
  private final Map<String, Set<Key>> detached = new HashMap<>();
  private final java.util.function.IntFunction<String> names;

  private int[] inFlight = new int[16];
  private long[] prefill = new long[16];
  private long[] decode = new long[16];
  private long[] active = new long[16];
  private int[] waiting = new int[16];
  private int[] running = new int[16];
  private double[] kvUsage = new double[16];

  /**
   * @param names replica index to target id (for {@link #id} and digests)
   */
  public LoadLedger(java.util.function.IntFunction<String> names) {
    this.names = names;
  }

  private record Key(String origin, String requestId) {}

  private record Lease(long deadline, Key key) {}

  private void ensure(int replica) {
    if (replica >= inFlight.length) {
      int n = Math.max(replica + 1, inFlight.length * 2);
      inFlight = java.util.Arrays.copyOf(inFlight, n);
      prefill = java.util.Arrays.copyOf(prefill, n);
      decode = java.util.Arrays.copyOf(decode, n);
      active = java.util.Arrays.copyOf(active, n);
      waiting = java.util.Arrays.copyOf(waiting, n);
      running = java.util.Arrays.copyOf(running, n);
      kvUsage = java.util.Arrays.copyOf(kvUsage, n);
    }
  }

  /**
   * Records a reservation on a replica known here by index; returns false (and changes nothing) if
   * the request already has one.
   */
  public boolean reserve(
      String origin,
      String requestId,
      int replica,
      int promptTokens,
      int prefillTokens,
      long leaseDeadline) {
    if (replica < 0) {
      throw new IllegalArgumentException("negative replica index");
    }
    return reserve(
        origin,
        requestId,
        names.apply(replica),
        replica,
        promptTokens,
        prefillTokens,
        leaseDeadline,
        NO_KEYS);
  }

  /**
   * Records a reservation on replica {@code replicaId}, whose index here is {@code replica} or
   * {@link Reservation#DETACHED} when this tracker does not know it, predicting that the replica
   * will hold {@code predictedKeys} (kept, never mutated); returns false (and changes nothing) if
   * the request already has one.
   */
  public boolean reserve(
      String origin,
      String requestId,
      String replicaId,
      int replica,
      int promptTokens,
      int prefillTokens,
      long leaseDeadline,
      long[] predictedKeys) {
    if (replica < Reservation.DETACHED || promptTokens < 0 || prefillTokens < 0) {
      throw new IllegalArgumentException("negative replica index or token count");
    }
    java.util.Objects.requireNonNull(replicaId, "replicaId");
    Key key = new Key(origin, requestId);
    if (reservations.containsKey(key)) {
      return false;
    }
    Reservation r =
        new Reservation(
            origin,
            requestId,
            replicaId,
            replica,
            promptTokens,
            Math.min(prefillTokens, promptTokens),
            false,
            leaseDeadline,
            predictedKeys);
    reservations.put(key, r);
    if (leaseDeadline != NO_LEASE) {
      leases.add(new Lease(leaseDeadline, key));
      if (leases.size() > 2 * reservations.size() + 1024) {
        compactLeases();
      }
    }
    if (r.attached()) {
      load(r);
    } else {
      detached.computeIfAbsent(replicaId, id -> new HashSet<>()).add(key);
    }
    digest(origin, r, +1);
    return true;
  }

  /** The prefill of the request finished; returns false if unknown or already decoding. */
  public boolean prefillCompleted(String origin, String requestId) {
    Key key = new Key(origin, requestId);
    Reservation r = reservations.get(key);
    if (r == null || r.decoding()) {
      return false;
    }
    Reservation next = r.decodingNow();
    reservations.put(key, next);
    if (r.attached()) {
      prefill[r.replica()] -= r.prefillTokens();
      decode[r.replica()] += r.promptTokens();
    }
    digest(origin, r, -1);
    digest(origin, next, +1);
    return true;
  }

  /** The request ended; returns its reservation, or {@code null} if unknown. */
  public Reservation release(String origin, String requestId) {
    Key key = new Key(origin, requestId);
    Reservation r = reservations.remove(key);
    if (r != null) {
      if (r.attached()) {
        unload(r);
      } else {
        forgetDetached(r.replicaId(), key);
      }
      digest(r.origin(), r, -1);
    }
    return r;
  }

  private void load(Reservation r) {
    int replica = r.replica();
    ensure(replica);
    inFlight[replica]++;
    prefill[replica] += r.decoding() ? 0 : r.prefillTokens();
    decode[replica] += r.decoding() ? r.promptTokens() : 0;
    active[replica] += r.promptTokens();
  }

  private void unload(Reservation r) {
    int replica = r.replica();
    inFlight[replica]--;
    active[replica] -= r.promptTokens();
    if (r.decoding()) {
      decode[replica] -= r.promptTokens();
    } else {
      prefill[replica] -= r.prefillTokens();
    }
  }

  private void compactLeases() {
    leases.clear();
    reservations.forEach(
        (key, r) -> {
          if (r.leaseDeadline() != NO_LEASE) {
            leases.add(new Lease(r.leaseDeadline(), key));
          }
        });
  }

  /** Lease entries held (open leases plus released ones not yet dropped), for tests. */
  int leaseEntries() {
    return leases.size();
  }

  private void forgetDetached(String replicaId, Key key) {
    Set<Key> keys = detached.get(replicaId);
    if (keys != null && keys.remove(key) && keys.isEmpty()) {
      detached.remove(replicaId);
    }
  }

  /** Drops every reservation whose lease ended at or before {@code nowMillis}; returns them. */
  public List<Reservation> expire(long nowMillis) {
    List<Reservation> expired = new ArrayList<>();
    Lease lease;
    while ((lease = leases.peek()) != null && lease.deadline <= nowMillis) {
      leases.poll();
      Reservation r = reservations.get(lease.key);
      if (r != null && r.leaseDeadline() == lease.deadline) {
        release(r.origin(), r.requestId());
        expired.add(r);
      }
    }
    return expired;
  }

  /** Drops every reservation made by {@code origin} (that ingress left); returns how many. */
  public int dropOrigin(String origin) {
    List<Reservation> doomed = new ArrayList<>();
    for (Reservation r : reservations.values()) {
      if (r.origin().equals(origin)) {
        doomed.add(r);
      }
    }
    doomed.forEach(r -> release(r.origin(), r.requestId()));
    originDigests.remove(origin);
    return doomed.size();
  }

  /**
   * The replica at {@code replica} left this tracker's view: its reservations stay (their origins
   * end them) but are detached from the index, which may be reused; its reported load is forgotten.
   * Returns how many reservations were detached.
   */
  public int detachReplica(int replica) {
    int moved = 0;
    for (Map.Entry<Key, Reservation> e : reservations.entrySet()) {
      Reservation r = e.getValue();
      if (r.replica() == replica) {
        unload(r);
        e.setValue(r.withReplica(Reservation.DETACHED));
        detached.computeIfAbsent(r.replicaId(), id -> new HashSet<>()).add(e.getKey());
        moved++;
      }
    }
    if (replica < inFlight.length) {
      waiting[replica] = 0;
      running[replica] = 0;
      kvUsage[replica] = 0;
    }
    return moved;
  }

  /**
   * Replica {@code replicaId} is known here again, at index {@code replica}: its detached
   * reservations weigh on its load from now on. Returns how many were attached.
   */
  public int attachReplica(String replicaId, int replica) {
    Set<Key> keys = detached.remove(replicaId);
    if (keys == null) {
      return 0;
    }
    for (Key key : keys) {
      Reservation r = reservations.get(key).withReplica(replica);
      reservations.put(key, r);
      load(r);
    }
    return keys.size();
  }

  /** Records the engine's last load report. */
  public void reportLoad(int replica, int runningNow, int waitingNow, double kvUsageNow) {
    ensure(replica);
    running[replica] = runningNow;
    waiting[replica] = waitingNow;
    kvUsage[replica] = kvUsageNow;
  }

  /** The open reservation of a request, or {@code null}. */
  public Reservation reservation(String origin, String requestId) {
    return reservations.get(new Key(origin, requestId));
  }

  /** Open reservations over all origins. */
  public int openReservations() {
    return reservations.size();
  }

  /** Open reservations on replicas not known here. */
  public int detachedReservations() {
    int n = 0;
    for (Set<Key> keys : detached.values()) {
      n += keys.size();
    }
    return n;
  }

  /** The digest of the open reservations made by {@code origin}. */
  public ReservationDigest digest(String origin) {
    long[] d = originDigests.get(origin);
    return d == null ? ReservationDigest.EMPTY : new ReservationDigest(d[0], d[1]);
  }

  /** Digests of every origin with open reservations. */
  public Map<String, ReservationDigest> digests() {
    Map<String, ReservationDigest> out = new HashMap<>();
    originDigests.forEach(
        (o, d) -> {
          if (d[0] != 0) {
            out.put(o, new ReservationDigest(d[0], d[1]));
          }
        });
    return out;
  }

  private void digest(String origin, Reservation r, int sign) {
    long h = HASH.hashChars(r.replicaId());
    h = h * 31 + r.promptTokens();
    h = h * 31 + r.prefillTokens();
    h = h * 31 + (r.decoding() ? 1 : 0);
    long mixed = HASH.hashLong(h);
    long[] d = originDigests.computeIfAbsent(origin, o -> new long[2]);
    d[0] += sign;
    d[1] += sign * mixed;
  }

  // ---------------------------------------------------------------- LoadView

  @Override
  public String id(int replica) {
    return names.apply(replica);
  }

  @Override
  public int inFlight(int replica) {
    return replica < inFlight.length ? inFlight[replica] : 0;
  }

  @Override
  public long prefillTokens(int replica) {
    return replica < prefill.length ? prefill[replica] : 0;
  }

  @Override
  public long decodeTokens(int replica) {
    return replica < decode.length ? decode[replica] : 0;
  }

  @Override
  public long activeTokens(int replica) {
    return replica < active.length ? active[replica] : 0;
  }

  @Override
  public int waiting(int replica) {
    return replica < waiting.length ? waiting[replica] : 0;
  }

  @Override
  public int running(int replica) {
    return replica < running.length ? running[replica] : 0;
  }

  @Override
  public double kvUsage(int replica) {
    return replica < kvUsage.length ? kvUsage[replica] : 0;
  }
}
