package io.kvrouter.config.node;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;

/** Starts dev-profile nodes on port 0 in this JVM and stops them all. */
final class TestNodes implements AutoCloseable {

  private final List<ActorSystem<Void>> systems = new ArrayList<>();

  /** The first node forms the cluster; later ones join it. */
  ActorSystem<Void> start(List<String> roles, Map<String, RoleGuardian> guardians) {
    List<String> seeds =
        systems.isEmpty() ? List.of() : List.of(address(systems.get(0)).toString());
    ActorSystem<Void> system = NodeBootstrap.start(NodeSettings.dev(roles, seeds), guardians);
    systems.add(system);
    return system;
  }

  static Address address(ActorSystem<?> system) {
    return Cluster.get(system).selfMember().address();
  }

  @Override
  public void close() {
    systems.forEach(ActorSystem::terminate);
    for (ActorSystem<Void> s : systems) {
      s.getWhenTerminated().toCompletableFuture().join();
    }
  }
}
