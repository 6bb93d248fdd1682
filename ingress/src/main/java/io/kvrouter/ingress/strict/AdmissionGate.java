package io.kvrouter.ingress.strict;

import io.kvrouter.protocol.GateCommand;
import java.util.concurrent.CompletionStage;

/**
 * Strict mode's cross-ingress admission, as the router sees it: ask a replica's gate to admit a
 * decision, and tell it when the request leaves. {@link StrictGate} is the cluster's (one sharded
 * entity per replica); tests give the router a fake.
 */
public interface AdmissionGate {

  /**
   * Asks {@code replica}'s gate to admit {@code requestId}, given the {@code expectedInFlight}
   * requests the tracker saw there ({@link Integer#MAX_VALUE} forces the admission). The stage
   * fails when the gate does not answer in time; the admission may still have landed.
   */
  CompletionStage<GateCommand.Admission> admit(
      String replica, String requestId, int expectedInFlight);

  /** The request left {@code replica} (harmless when the gate never admitted it). */
  void leave(String replica, String requestId);
}
