package io.kvrouter.config.node;

import java.util.Map;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** The root actor of a node: spawns the guardian of each role the node plays, then idles. */
final class NodeGuardian {

  private NodeGuardian() {}

  static Behavior<Void> create(Map<String, RoleGuardian> guardians) {
    return Behaviors.setup(
        context -> {
          guardians.forEach(
              (role, guardian) -> context.spawn(guardian.create(), role + "-guardian"));
          return Behaviors.empty();
        });
  }
}
