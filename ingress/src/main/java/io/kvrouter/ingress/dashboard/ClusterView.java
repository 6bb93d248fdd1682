package io.kvrouter.ingress.dashboard;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.ClusterActorRefProvider;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;

/**
 * The cluster as this node sees it, as JSON for the dashboard ({@code GET
 * /dashboard/cluster.json}):
 *
 * <pre>{@code
 * {"cluster": true, "self": "pekko://kvrouter@127.0.0.1:2551", "leader": "pekko://...",
 *  "generated_at_ms": 1700000000000,
 *  "members": [{"address": "pekko://...", "roles": ["ingress"], "status": "Up",
 *               "reachable": true, "self": true}, ...]}
 * }</pre>
 *
 * Members are sorted by address; data-centre roles ({@code dc-*}) are left out. On a node that is
 * not a cluster node, {@code cluster} is false and {@code members} is empty.
 *
 * <p>Reads {@link Cluster#state()}, a snapshot the cluster extension keeps current; cost
 * O(members). Thread-safe.
 */
public final class ClusterView {

  private final ObjectMapper mapper;

  public ClusterView(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** The JSON described above, for {@code system}. */
  public ObjectNode snapshot(ActorSystem system) {
    ObjectNode out = mapper.createObjectNode();
    out.put("generated_at_ms", System.currentTimeMillis());
    boolean clustered =
        system instanceof ExtendedActorSystem ext
            && ext.provider() instanceof ClusterActorRefProvider;
    out.put("cluster", clustered);
    ArrayNode members = out.putArray("members");
    if (!clustered) {
      return out;
    }
    Cluster cluster = Cluster.get(system);
    CurrentClusterState state = cluster.state();
    Address self = cluster.selfAddress();
    out.put("self", self.toString());
    Address leader = state.getLeader();
    if (leader != null) {
      out.put("leader", leader.toString());
    }
    Set<Member> unreachable = state.getUnreachable();
    TreeSet<Member> sorted =
        new TreeSet<>((a, b) -> a.address().toString().compareTo(b.address().toString()));
    state.getMembers().forEach(sorted::add);
    for (Member m : sorted) {
      ObjectNode node = members.addObject();
      node.put("address", m.address().toString());
      ArrayNode roles = node.putArray("roles");
      new TreeSet<>(m.getRoles()).stream().filter(r -> !r.startsWith("dc-")).forEach(roles::add);
      node.put("status", m.status().toString());
      node.put("reachable", !unreachable.contains(m));
      node.put("self", m.address().equals(self));
    }
    return out;
  }
}
