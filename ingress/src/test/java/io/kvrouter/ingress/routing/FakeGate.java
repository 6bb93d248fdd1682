package io.kvrouter.ingress.routing;

import io.kvrouter.ingress.strict.AdmissionGate;
import io.kvrouter.ingress.strict.GateLedger;
import io.kvrouter.protocol.GateCommand;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The replicas' strict-mode gates without a cluster: one real {@link GateLedger} per replica, as
 * {@code ReplicaGate} keeps it, in which other ingresses may already hold requests this router's
 * tracker has not seen. Records every call; can turn unreachable (every ask times out, after the
 * admission landed, the worst case for bookkeeping).
 */
final class FakeGate implements AdmissionGate {

  /** One admit call: the replica asked, the request and whether the admission was forced. */
  record Admit(String replica, String requestId, boolean forced) {}

  private static final long LEASE_MILLIS = 600_000;
  private static final long NOW = 1_000;

  private final Map<String, GateLedger> ledgers = new HashMap<>();
  final List<Admit> admits = new CopyOnWriteArrayList<>();
  final List<String> leaves = new CopyOnWriteArrayList<>();
  private volatile Consumer<String> onTurnedAway = replica -> {};
  private volatile boolean unreachable;

  /** Another ingress holds {@code requestId} on {@code replica}; this router never saw it. */
  synchronized FakeGate heldElsewhere(String replica, String requestId) {
    ledger(replica).admit(requestId, Integer.MAX_VALUE, LEASE_MILLIS, NOW);
    return this;
  }

  /** Runs {@code action} with the replica each time a gate turns a request away. */
  FakeGate onTurnedAway(Consumer<String> action) {
    this.onTurnedAway = action;
    return this;
  }

  /** From now on every ask is admitted but its answer never arrives (the ask times out). */
  void becomeUnreachable() {
    unreachable = true;
  }

  /** Requests {@code replica}'s gate holds now (ours and other ingresses'). */
  synchronized int held(String replica) {
    return ledger(replica).inFlight();
  }

  @Override
  public CompletionStage<GateCommand.Admission> admit(
      String replica, String requestId, int expectedInFlight) {
    admits.add(new Admit(replica, requestId, expectedInFlight == Integer.MAX_VALUE));
    boolean admitted;
    int inFlight;
    synchronized (this) {
      admitted = ledger(replica).admit(requestId, expectedInFlight, LEASE_MILLIS, NOW);
      inFlight = ledger(replica).inFlight();
    }
    if (unreachable) {
      return CompletableFuture.failedFuture(new TimeoutException("gate of " + replica));
    }
    if (!admitted) {
      onTurnedAway.accept(replica);
    }
    return CompletableFuture.completedFuture(new GateCommand.Admission(admitted, inFlight));
  }

  @Override
  public synchronized void leave(String replica, String requestId) {
    leaves.add(replica + ":" + requestId);
    ledger(replica).leave(requestId);
  }

  private GateLedger ledger(String replica) {
    return ledgers.computeIfAbsent(replica, r -> new GateLedger());
  }
}
