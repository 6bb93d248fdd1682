package io.kvrouter.config.node;

import org.apache.pekko.actor.CoordinatedShutdown;

/**
 * Why a node shut itself down because it cannot do its job (its HTTP port could not be bound, for
 * one): the launcher prints the cause and exits with status 1, so a supervisor (systemd, the
 * kubelet) sees a failed process instead of a cluster member that serves nothing.
 *
 * @param cause what went wrong, for the operator
 */
public record NodeFailed(String cause) implements CoordinatedShutdown.Reason {}
