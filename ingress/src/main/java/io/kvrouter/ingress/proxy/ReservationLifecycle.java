package io.kvrouter.ingress.proxy;

import io.kvrouter.ingress.routing.Router;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Guards one reservation's lifecycle so the tracker hears {@code prefillCompleted} at most once and
 * {@code released} exactly once, whichever of completion, error, timeout or client disconnect comes
 * first (and whatever thread it comes on).
 */
final class ReservationLifecycle {

  private final Router router;
  private final String reservationId;
  private final AtomicBoolean prefilled = new AtomicBoolean();
  private final AtomicBoolean released = new AtomicBoolean();

  ReservationLifecycle(Router router, String reservationId) {
    this.router = router;
    this.reservationId = reservationId;
  }

  /** The first response byte arrived; returns true the first time only. */
  boolean firstByte() {
    if (!released.get() && prefilled.compareAndSet(false, true)) {
      router.prefillCompleted(reservationId);
      return true;
    }
    return false;
  }

  /** The request is over; the tracker is told once. */
  void release() {
    if (released.compareAndSet(false, true)) {
      router.released(reservationId);
    }
  }
}
