package io.kvrouter.ingress.traffic;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Where sessions are bound to replicas, shared by every ingress. */
public interface SessionStore {

  /**
   * The live binding of {@code session} (a model-qualified key), or null when there is none or it
   * expired. Never fails: a binding that cannot be read in time is none.
   */
  CompletionStage<SessionBinding> lookup(String session);

  /** Binds {@code session} to {@code replica} (or refreshes the binding), without waiting. */
  void bind(String session, String replica);

  /** No sessions: every lookup finds nothing. */
  SessionStore NONE =
      new SessionStore() {
        @Override
        public CompletionStage<SessionBinding> lookup(String session) {
          return CompletableFuture.completedFuture(null);
        }

        @Override
        public void bind(String session, String replica) {}
      };
}
