package io.kvrouter.ingress.proxy;

import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * A router that tells the admission queue whenever one of its reservations is released: the slot is
 * free (the queue wakes its first waiters) and the tenant that held it runs one request fewer.
 */
final class SignallingRouter implements Router {

  private final Router delegate;
  private final AdmissionQueue admission;

  SignallingRouter(Router delegate, AdmissionQueue admission) {
    this.delegate = delegate;
    this.admission = admission;
  }

  @Override
  public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
    return delegate.selectAndReserve(query);
  }

  @Override
  public void prefillCompleted(String reservationId) {
    delegate.prefillCompleted(reservationId);
  }

  @Override
  public void released(String reservationId) {
    delegate.released(reservationId);
    admission.released(reservationId);
  }

  @Override
  public Set<String> servedModels() {
    return delegate.servedModels();
  }

  @Override
  public String baseModel(String model) {
    return delegate.baseModel(model);
  }

  @Override
  public boolean disaggregated(String model) {
    return delegate.disaggregated(model);
  }
}
