package io.kvrouter.ingress.routing;

import io.kvrouter.protocol.ReplicaInfo;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * Turns a query's constraints into the replicas the tracker must not choose: those already tried,
 * those whose engine does not serve the API the request needs, and, when the request is pinned to a
 * replica that is still known, every other replica of the model. A pin to a replica that has left
 * is dropped: the request goes wherever the tracker sends it, and the engine there says that it
 * does not hold the state. Cost: one pass over the known replicas, only for constrained queries.
 */
final class ReplicaConstraints {

  private ReplicaConstraints() {}

  static Set<String> excluded(RouteQuery query, Collection<ReplicaInfo> replicas) {
    if (query.requiredApi() == null && query.pinnedReplica() == null) {
      return query.excluded();
    }
    boolean pinKnown =
        query.pinnedReplica() != null
            && replicas.stream().anyMatch(i -> i.targetId().equals(query.pinnedReplica()));
    Set<String> excluded = new HashSet<>(query.excluded());
    for (ReplicaInfo i : replicas) {
      if (!i.model().equals(query.model())) {
        continue;
      }
      if (query.requiredApi() != null && !i.serves(query.requiredApi())) {
        excluded.add(i.targetId());
      }
      if (pinKnown && !i.targetId().equals(query.pinnedReplica())) {
        excluded.add(i.targetId());
      }
    }
    return excluded;
  }
}
