package io.kvrouter.ingress.proxy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The bounded router queue for requests that arrive while every replica is over its busy threshold.
 * A request takes a place ({@link #tryEnter}), waits for a wake-up ({@link #await}), asks the
 * router again, and leaves ({@link #leave}) when it is placed or gives up. Wake-ups come from
 * releases on this node ({@link #signal}, oldest waiter first) and, because load also falls when
 * other ingresses' requests end, from a periodic recheck.
 *
 * <p>Thread-safe and lock-free; each operation is O(1).
 */
public final class AdmissionQueue {

  private final int capacity;
  private final Duration maxWait;
  private final Duration recheck;
  private final AtomicInteger queued = new AtomicInteger();
  private final ConcurrentLinkedQueue<CompletableFuture<Void>> waiters =
      new ConcurrentLinkedQueue<>();

  /**
   * @param capacity requests that may wait at once; the next one gets 429
   * @param maxWait how long one request may wait in total before it gets 429
   * @param recheck how often a waiting request asks again without a wake-up
   */
  public AdmissionQueue(int capacity, Duration maxWait, Duration recheck) {
    if (capacity < 0) {
      throw new IllegalArgumentException("capacity must be >= 0, was " + capacity);
    }
    this.capacity = capacity;
    this.maxWait = maxWait;
    this.recheck = recheck;
  }

  /** Takes a place in the queue; false when it is full. */
  public boolean tryEnter() {
    while (true) {
      int n = queued.get();
      if (n >= capacity) {
        return false;
      }
      if (queued.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** Gives the place back. */
  public void leave() {
    queued.decrementAndGet();
  }

  /** Completes at the next wake-up or after the recheck interval, whichever is first. */
  public CompletableFuture<Void> await() {
    CompletableFuture<Void> waiter = new CompletableFuture<>();
    waiters.add(waiter);
    return waiter
        .completeOnTimeout(null, recheck.toMillis(), TimeUnit.MILLISECONDS)
        .whenComplete((v, e) -> waiters.remove(waiter));
  }

  /** Capacity freed up: wakes the oldest waiter. */
  public void signal() {
    CompletableFuture<Void> next;
    while ((next = waiters.poll()) != null) {
      if (next.complete(null)) {
        return;
      }
    }
  }

  /** Requests waiting now. */
  public int size() {
    return queued.get();
  }

  /** How long one request may wait in total. */
  public Duration maxWait() {
    return maxWait;
  }
}
