package io.kvrouter.ingress.routing;

import io.kvrouter.ingress.strict.AdmissionGate;
import io.kvrouter.protocol.GateCommand;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Strict mode's bookkeeping between calls of a {@link TrackerRouter}: which replica's gate admitted
 * each open reservation, so that its release leaves that gate. The only state the router keeps
 * between calls; an entry is dropped when its reservation is released, and a call that fails gives
 * back what it may hold at once.
 *
 * <p>Thread-safety: written where a gate's admission completes (the ask's completion thread) and
 * read and removed where a request is released (the thread that ends its response stream, or the
 * router's own retry), never by an actor; one concurrent map, so either order of an admit and a
 * release of different reservations is safe, and one reservation is admitted before it can be
 * released.
 */
final class GatedReservations {

  private final AdmissionGate gate;
  private final Map<String, String> gated = new ConcurrentHashMap<>();

  GatedReservations(AdmissionGate gate) {
    this.gate = gate;
  }

  /** Asks {@code replica}'s gate to admit reservation {@code id} ({@link AdmissionGate#admit}). */
  CompletionStage<GateCommand.Admission> admit(String replica, String id, int expectedInFlight) {
    return gate.admit(replica, id, expectedInFlight);
  }

  /** {@code replica}'s gate admitted {@code id}: its release must leave that gate. */
  void admitted(String id, String replica) {
    gated.put(id, replica);
  }

  /**
   * The admission of {@code id} at {@code replica} failed (no answer in time): leave that gate,
   * where the admission may have landed after the timeout (its lease ends it if the leave overtakes
   * the admit).
   */
  void failed(String replica, String id) {
    gate.leave(replica, id);
  }

  /** Reservation {@code id} was released: leave the gate that admitted it, if one did. */
  void released(String id) {
    String replica = gated.remove(id);
    if (replica != null) {
      gate.leave(replica, id);
    }
  }

  /** Admitted reservations not yet released. */
  int open() {
    return gated.size();
  }
}
