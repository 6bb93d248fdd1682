package io.kvrouter.config.node;

import com.typesafe.config.Config;
import io.kvrouter.config.management.NodeManagement;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/**
 * Starts one kvrouter cluster node: an ActorSystem with its roles, the guardian of each role, and
 * the join (cluster bootstrap through Pekko Management when {@code kvrouter.management.bootstrap}
 * is on, else seed nodes from configuration, or self-join to form a new cluster). Several nodes may
 * run in one JVM on different ports; the demo and the tests do this.
 */
public final class NodeBootstrap {

  private NodeBootstrap() {}

  /**
   * Starts a node.
   *
   * @param settings address, roles, seeds, profile
   * @param guardians the guardian of each role; roles the node does not play are ignored, a role
   *     without a guardian gets none (the node still joins with that role)
   * @return the running node's actor system
   */
  public static ActorSystem<Void> start(
      NodeSettings settings, Map<String, RoleGuardian> guardians) {
    Config config = settings.toConfig();
    Map<String, RoleGuardian> mine = new LinkedHashMap<>();
    for (String role : settings.roles()) {
      RoleGuardian guardian = guardians.get(role);
      if (guardian != null) {
        mine.put(role, guardian);
      }
    }
    ActorSystem<Void> system =
        ActorSystem.create(
            NodeGuardian.create(mine), config.getString("kvrouter.node.system-name"), config);
    NodeManagement.start(system, config);
    boolean hasSeeds = !config.getStringList("pekko.cluster.seed-nodes").isEmpty();
    if (!hasSeeds
        && !NodeManagement.bootstraps(config)
        && config.getBoolean("kvrouter.node.self-join")) {
      Cluster cluster = Cluster.get(system);
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
    }
    return system;
  }
}
