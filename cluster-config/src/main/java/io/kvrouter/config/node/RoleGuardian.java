package io.kvrouter.config.node;

import org.apache.pekko.actor.typed.Behavior;

/**
 * Creates the guardian of one node role ({@code ingress}, {@code agent}). The module that owns the
 * role supplies it; {@link NodeBootstrap} spawns it when the node has that role.
 */
@FunctionalInterface
public interface RoleGuardian {

  /** The guardian's behavior; it spawns and registers everything the role runs. */
  Behavior<?> create();
}
