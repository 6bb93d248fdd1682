package io.kvrouter.ingress.proxy;

import io.kvrouter.ingress.traffic.FairQueue;
import io.kvrouter.ingress.traffic.PeerQueues;
import io.kvrouter.ingress.traffic.QueueState;
import io.kvrouter.ingress.traffic.TenantPrecedence;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The bounded router queue for requests that arrive while every replica of their model is over its
 * busy threshold (or none meets their TTFT target). Requests wait in a {@link FairQueue} per model:
 * by priority, then fairly among tenants (first by the slots each holds cluster-wide, then by
 * tokens), then by age. Every placement of a model's request, waited or not, is told ({@link
 * #started}) and so is its release ({@link #released}), so the queue knows how many requests each
 * tenant runs. Only the request whose turn it is asks the router again: when a reservation of this
 * node is released ({@link #released}), when another ingress's is ({@link PeerQueues#freed}, heard
 * on the reservation plane), and at each recheck interval (capacity may also come back without a
 * release: a replica joining, load reports); when it is placed ({@link #placed}) the next one gets
 * its turn at once, so a burst of free capacity drains the queue in order. The recheck wakes only
 * the head of each model's queue; the others sleep until their turn or their deadline (the patience
 * given to {@link #await}), so 20 waiters cost one wake-up per interval, not twenty. While requests
 * of a model wait, newcomers for it queue behind them ({@link #hasWaiters}) instead of overtaking.
 *
 * <p>Across ingresses: each tells the others what it waits with and runs per model (the {@code
 * heads} listener, a {@link QueueState} whenever it changes), and a request whose turn comes yields
 * it while another ingress waits with a stronger claim ({@link PeerQueues#ahead}: a more pressing
 * priority, or a tenant with fewer slots cluster-wide per unit of weight): otherwise the ingress
 * whose requests free capacity would always ask first, slots would stay with the ingress that held
 * them, and a more pressing request or a tenant further behind elsewhere would wait behind its
 * queue. The tenant order within this queue counts slots cluster-wide too ({@link
 * PeerQueues#running}).
 *
 * <p>A request whose tenant holds less than a waiting tenant's share of slots may go past a
 * replica's busy threshold by the fair headroom ({@link #headroom}), and does not queue behind the
 * waiters: it would be first in line, yet wait for a slot to free.
 *
 * <p>When the queue is full a newcomer displaces the {@link FairQueue#victim()} if it is more
 * pressing (a lower priority value), or of equal priority from a tenant holding fewer places: the
 * displaced request is told {@link Wake#SHED} and answered 429. Otherwise the newcomer gets 429.
 * Which request may pass which is {@link TenantPrecedence}'s; this class queues and wakes.
 *
 * <p>Thread-safe: every operation takes the queue's lock for O(tenants) work, and waiters are woken
 * after it is released. The waiters, the tenants' running counts and what was told to the other
 * ingresses change together under that one lock.
 */
public final class AdmissionQueue {

  /** Why a waiting request's {@link #await} completed. */
  public enum Wake {
    /** It is its turn: ask the router. */
    TURN,
    /**
     * The recheck interval passed (it was the head) or its patience ran out: ask the router if
     * {@link #isNext}, else wait again (or give up, past its deadline).
     */
    RECHECK,
    /** A more pressing request took its place: answer 429. */
    SHED
  }

  /** A request's place in the queue. */
  public static final class Ticket {
    private final String model;
    private FairQueue.Entry<Ticket> entry;
    private CompletableFuture<Wake> waiter;
    private boolean turnPending;
    private boolean shed;

    private Ticket(String model) {
      this.model = model;
    }

    /** The priority it waits at. */
    public int priority() {
      return entry.priority();
    }
  }

  private final int capacity;
  private final Duration maxWait;
  private final long quantum;
  private final Map<String, FairQueue<Ticket>> byModel = new HashMap<>();
  private final PeerQueues peers;
  private final Consumer<QueueState> heads;
  private final Executor afterRecheck;
  private final int fairHeadroom;

  /** What {@code heads} was last told per model (absent: idle). */
  private final Map<String, QueueState> published = new HashMap<>();

  /** True while a recheck is scheduled (from the first waiter until the queue is empty). */
  private boolean rechecking;

  /** The model and tenant of each placed request until its release, by reservation id. */
  private final Map<String, Running> running = new HashMap<>();

  private record Running(String model, String tenant) {}

  private int size;

  /**
   * @param capacity requests that may wait at once
   * @param maxWait how long one request may wait in total before it gets 429
   * @param recheck how often the request whose turn it is asks again without a wake-up
   * @param quantumTokens tokens credited to a tenant of weight 1 per fair-queuing round
   */
  public AdmissionQueue(int capacity, Duration maxWait, Duration recheck, long quantumTokens) {
    this(capacity, maxWait, recheck, quantumTokens, PeerQueues.NONE, state -> {}, 0);
  }

  /**
   * @param peers what the other ingresses wait with and run; their releases wake this queue
   * @param heads told what this queue holds for a model whenever it changes, to tell the other
   *     ingresses (under the lock: must not block)
   * @param fairHeadroom requests a replica may hold beyond its busy threshold for a tenant below
   *     its fair share while another waits ({@link #headroom}); 0: none
   */
  public AdmissionQueue(
      int capacity,
      Duration maxWait,
      Duration recheck,
      long quantumTokens,
      PeerQueues peers,
      Consumer<QueueState> heads,
      int fairHeadroom) {
    if (fairHeadroom < 0) {
      throw new IllegalArgumentException("fairHeadroom must be >= 0, was " + fairHeadroom);
    }
    this.fairHeadroom = fairHeadroom;
    this.peers = peers;
    this.heads = heads;
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity must be >= 0, was " + capacity);
    }
    this.capacity = capacity;
    this.maxWait = maxWait;
    this.quantum = quantumTokens;
    // The recheck runs on the JDK's delay thread, as a timed-out await completes.
    this.afterRecheck =
        CompletableFuture.delayedExecutor(recheck.toNanos(), TimeUnit.NANOSECONDS, Runnable::run);
    peers.onFreed(this::signal);
  }

  /**
   * Takes a place for a request of {@code model}; null when the queue is full and the request may
   * displace nobody. May shed a less pressing waiter to make room.
   *
   * @param cost the request's tokens (its fair-queuing cost)
   * @param weight its tenant's share
   */
  public Ticket enter(String model, int priority, String tenant, long cost, double weight) {
    return enter(model, priority, tenant, cost, weight, 0);
  }

  /**
   * The same for a request whose program ranks at {@code rank} ({@link FairQueue#add}: lower goes
   * ahead of its tenant's other waiters at its priority).
   */
  public Ticket enter(
      String model, int priority, String tenant, long cost, double weight, double rank) {
    CompletableFuture<Wake> shedWaiter = null;
    boolean startRecheck;
    Ticket ticket = new Ticket(model);
    synchronized (this) {
      if (size >= capacity) {
        FairQueue.Entry<Ticket> victim =
            TenantPrecedence.victim(byModel.values(), byModel.get(model), priority, tenant);
        if (victim == null) {
          return null;
        }
        Ticket shed = victim.value();
        byModel.get(shed.model).remove(victim, false);
        size--;
        cleanUp(shed.model);
        publish(shed.model);
        shed.shed = true;
        shedWaiter = shed.waiter;
        shed.waiter = null;
      }
      ticket.entry = queueOf(model).add(ticket, priority, tenant, cost, weight, rank);
      size++;
      publish(model);
      startRecheck = !rechecking;
      rechecking = true;
    }
    if (startRecheck) {
      afterRecheck.execute(this::recheck);
    }
    if (shedWaiter != null) {
      shedWaiter.complete(Wake.SHED);
    }
    return ticket;
  }

  /** The queue of {@code model}, created counting what the other ingresses run. */
  private FairQueue<Ticket> queueOf(String model) {
    return byModel.computeIfAbsent(
        model, m -> new FairQueue<>(quantum, t -> peers.running(m, t, System.nanoTime())));
  }

  /** True while requests of {@code model} wait: a newcomer must queue behind them. */
  public synchronized boolean hasWaiters(String model) {
    FairQueue<Ticket> q = byModel.get(model);
    return q != null && !q.isEmpty();
  }

  /**
   * How many requests a replica may hold beyond its busy threshold for a request of {@code tenant}
   * (of {@code weight}) at {@code priority}: the fair headroom while the tenant is below its fair
   * share ({@link TenantPrecedence#belowFairShare}), otherwise 0.
   */
  public synchronized int headroom(String model, int priority, String tenant, double weight) {
    if (fairHeadroom == 0) {
      return 0;
    }
    boolean below =
        TenantPrecedence.belowFairShare(
            byModel.get(model), peers, model, priority, tenant, weight, System.nanoTime());
    return below ? fairHeadroom : 0;
  }

  /** True when it is {@code ticket}'s turn (it is first in its model's order). */
  public synchronized boolean isNext(Ticket ticket) {
    FairQueue<Ticket> q = byModel.get(ticket.model);
    return q != null && q.peek() == ticket.entry && !yields(ticket.model, q, ticket.entry);
  }

  /** True while another ingress waits for {@code model} with a stronger claim than {@code head}. */
  private boolean yields(String model, FairQueue<Ticket> q, FairQueue.Entry<Ticket> head) {
    return peers.ahead(model, head.priority(), q.share(head), q::running, System.nanoTime());
  }

  /** Tells the listener when what this queue holds for {@code model} changed. */
  private void publish(String model) {
    FairQueue<Ticket> q = byModel.get(model);
    QueueState now =
        q == null
            ? QueueState.idle(model)
            : new QueueState(model, q.firstPriority(), q.firstTenants(), q.running());
    if (!now.equals(published.getOrDefault(model, QueueState.idle(model)))) {
      if (now.isIdle()) {
        published.remove(model);
      } else {
        published.put(model, now);
      }
      heads.accept(now);
    }
  }

  /**
   * Completes at the ticket's next turn, when it is shed, at a recheck while it is the head of its
   * model's queue, or after {@code patience} (its deadline: how long it may still wait), whichever
   * is first.
   */
  public CompletionStage<Wake> await(Ticket ticket, Duration patience) {
    CompletableFuture<Wake> waiter = new CompletableFuture<>();
    synchronized (this) {
      if (ticket.shed) {
        return CompletableFuture.completedFuture(Wake.SHED);
      }
      if (ticket.turnPending) {
        ticket.turnPending = false;
        return CompletableFuture.completedFuture(Wake.TURN);
      }
      ticket.waiter = waiter;
    }
    return waiter
        .completeOnTimeout(Wake.RECHECK, Math.max(0, patience.toNanos()), TimeUnit.NANOSECONDS)
        .whenComplete(
            (w, e) -> {
              synchronized (this) {
                if (ticket.waiter == waiter) {
                  ticket.waiter = null;
                }
              }
            });
  }

  /**
   * A request of {@code model} and {@code tenant} was placed as {@code reservationId} (whether it
   * waited or not): it counts as running for its tenant until {@link #released}. Tell this before
   * {@link #placed}, so the next turn already counts it.
   */
  public synchronized void started(String reservationId, String model, String tenant) {
    running.put(reservationId, new Running(model, tenant));
    queueOf(model).started(tenant);
    publish(model);
  }

  /**
   * The reservation {@code reservationId} was released: its slot is free, so its tenant runs one
   * request fewer and the first waiter of every model gets its turn ({@link #signal}). A
   * reservation never {@link #started} only signals.
   */
  public void released(String reservationId) {
    synchronized (this) {
      Running r = running.remove(reservationId);
      if (r != null) {
        FairQueue<Ticket> q = byModel.get(r.model());
        if (q != null) {
          q.finished(r.tenant());
          cleanUp(r.model());
          publish(r.model());
        }
      }
    }
    signal();
  }

  /** The ticket's request was placed: it leaves, and the next one of its model gets its turn. */
  public void placed(Ticket ticket) {
    remove(ticket, true);
  }

  /** The ticket's request gives up (waited too long, failed); its place is freed. */
  public void leave(Ticket ticket) {
    remove(ticket, false);
  }

  private void remove(Ticket ticket, boolean served) {
    CompletableFuture<Wake> next;
    synchronized (this) {
      FairQueue<Ticket> q = byModel.get(ticket.model);
      if (q == null) {
        return;
      }
      boolean wasNext = q.peek() == ticket.entry;
      if (!q.remove(ticket.entry, served)) {
        return;
      }
      size--;
      cleanUp(ticket.model);
      publish(ticket.model);
      next = served || wasNext || ticket.turnPending ? turnOf(ticket.model) : null;
    }
    if (next != null) {
      next.complete(Wake.TURN);
    }
  }

  /**
   * Capacity freed up (on this node, or a peer's release was heard): the first waiter of every
   * model gets its turn.
   */
  public void signal() {
    List<CompletableFuture<Wake>> woken = new ArrayList<>();
    synchronized (this) {
      for (String model : byModel.keySet()) {
        CompletableFuture<Wake> w = turnOf(model);
        if (w != null) {
          woken.add(w);
        }
      }
    }
    woken.forEach(w -> w.complete(Wake.TURN));
  }

  /**
   * Gives the turn to {@code model}'s first waiter: returns its waiter to complete (outside the
   * lock), or marks the turn pending while it is busy asking.
   */
  private CompletableFuture<Wake> turnOf(String model) {
    FairQueue<Ticket> q = byModel.get(model);
    FairQueue.Entry<Ticket> head = q == null ? null : q.peek();
    if (head == null || yields(model, q, head)) {
      return null;
    }
    Ticket t = head.value();
    CompletableFuture<Wake> w = t.waiter;
    if (w == null) {
      t.turnPending = true;
    }
    t.waiter = null;
    return w;
  }

  /**
   * Every recheck interval while anything waits: the head of each model's queue (unless it yields
   * to another ingress) asks the router again, in case capacity came back without a release. A head
   * busy asking is left alone (its answer is as fresh).
   */
  private void recheck() {
    List<CompletableFuture<Wake>> woken = new ArrayList<>();
    boolean again;
    synchronized (this) {
      for (FairQueue<Ticket> q : byModel.values()) {
        FairQueue.Entry<Ticket> head = q.peek();
        if (head != null && head.value().waiter != null && !yields(head.value().model, q, head)) {
          woken.add(head.value().waiter);
          head.value().waiter = null;
        }
      }
      again = size > 0;
      rechecking = again;
    }
    if (again) {
      afterRecheck.execute(this::recheck);
    }
    woken.forEach(w -> w.complete(Wake.RECHECK));
  }

  private void cleanUp(String model) {
    FairQueue<Ticket> q = byModel.get(model);
    if (q != null && q.isIdle()) {
      byModel.remove(model);
    }
  }

  /** Requests waiting now. */
  public synchronized int size() {
    return size;
  }

  /** How long one request may wait in total. */
  public Duration maxWait() {
    return maxWait;
  }
}
