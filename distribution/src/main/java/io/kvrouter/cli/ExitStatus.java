package io.kvrouter.cli;

import io.kvrouter.config.node.NodeFailed;
import java.util.Optional;
import org.apache.pekko.actor.CoordinatedShutdown;

/**
 * The status a node's process exits with, from why its actor system shut down. A node that stopped
 * because it was asked to (SIGTERM, leaving the cluster) exits 0. A node that stopped because it
 * cannot go on exits 1, so its supervisor (systemd's {@code Restart=on-failure}, the kubelet, a
 * test harness) starts it again: it failed ({@link NodeFailed}), the cluster downed it (its split
 * brain resolver or an operator: a downed node can never rejoin under the same incarnation, so a
 * downed agent that stayed up would leave its engine without an agent for good), or it could not
 * join the seed nodes in time.
 */
final class ExitStatus {

  private ExitStatus() {}

  /** Exit 0: the node was asked to stop. */
  static final int STOPPED = 0;

  /** Exit 1: the node could not go on; a supervisor should start it again. */
  static final int FAILED = 1;

  /** A status and, for a failure, the line that explains it on stderr. */
  record Outcome(int status, Optional<String> explanation) {}

  /**
   * @param reason the reason coordinated shutdown ran with, if it ran
   */
  static Outcome of(Optional<CoordinatedShutdown.Reason> reason) {
    if (reason.isEmpty()) {
      return new Outcome(STOPPED, Optional.empty());
    }
    CoordinatedShutdown.Reason r = reason.get();
    if (r instanceof NodeFailed failed) {
      return failed(failed.cause());
    }
    if (r.equals(CoordinatedShutdown.clusterDowningReason())) {
      return failed(
          "the cluster downed this node (its split brain resolver or an operator); a downed node"
              + " cannot rejoin, so the process exits for its supervisor to start it again");
    }
    if (r.equals(CoordinatedShutdown.clusterJoinUnsuccessfulReason())) {
      return failed("this node could not join the cluster's seed nodes in time");
    }
    return new Outcome(STOPPED, Optional.empty());
  }

  private static Outcome failed(String why) {
    return new Outcome(FAILED, Optional.of("kvrouter: " + why));
  }
}
