package io.kvrouter.config.management;

import java.util.concurrent.CompletionStage;

/**
 * One role's answer to "may this node take traffic now?" (for an ingress: HTTP bound, tracker
 * caught up with the replicas and its peers). The role that owns the state supplies it; {@link
 * NodeReadiness} asks every registered one. It must answer quickly and never block.
 */
@FunctionalInterface
public interface Readiness {

  /** Completes with true when the role is ready to serve. */
  CompletionStage<Boolean> query();
}
