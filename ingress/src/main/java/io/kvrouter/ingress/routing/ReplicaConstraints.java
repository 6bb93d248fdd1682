package io.kvrouter.ingress.routing;

import io.kvrouter.protocol.ReplicaInfo;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * Turns a query's constraints into the replicas the tracker must not choose: those already tried,
 * those outside the query's pool (prefill-only replicas for requests and decode hops, decode-only
 * replicas for prefill hops), those whose engine does not serve the API the request needs, and,
 * when the request is pinned to a replica that is still known, every other replica of the model. A
 * pin to a replica that has left is dropped: the request goes wherever the tracker sends it, and
 * the engine there says that it does not hold the state. Cost: one pass over the known replicas,
 * only for constrained queries.
 */
final class ReplicaConstraints {

  private ReplicaConstraints() {}

  static Set<String> excluded(ReplicaQuery query, Collection<ReplicaInfo> replicas) {
    return excluded(query, query.model(), replicas, true);
  }

  /**
   * @param model the model whose replicas serve the query (the base model of a LoRA adapter)
   * @param rolesMatter false when every replica has role {@code both} (nothing to filter by role:
   *     the common case stays free)
   */
  static Set<String> excluded(
      ReplicaQuery query, String model, Collection<ReplicaInfo> replicas, boolean rolesMatter) {
    if (query.requiredApi() == null && query.pinnedReplica() == null && !rolesMatter) {
      return query.excluded();
    }
    boolean pinKnown =
        query.pinnedReplica() != null
            && replicas.stream().anyMatch(i -> i.targetId().equals(query.pinnedReplica()));
    Set<String> excluded = new HashSet<>(query.excluded());
    for (ReplicaInfo i : replicas) {
      if (!i.model().equals(model)) {
        continue;
      }
      if (query.requiredApi() != null && !i.serves(query.requiredApi())) {
        excluded.add(i.targetId());
      }
      if (query.pool() == ReplicaQuery.Pool.PREFILL ? !i.prefills() : !i.decodes()) {
        excluded.add(i.targetId());
      }
      if (pinKnown && !i.targetId().equals(query.pinnedReplica())) {
        excluded.add(i.targetId());
      }
    }
    return excluded;
  }

  /** {@code excluded} and every replica of {@code model} not among {@code holders}. */
  static Set<String> withoutNonHolders(
      Set<String> excluded, String model, Set<String> holders, Collection<ReplicaInfo> replicas) {
    Set<String> out = new HashSet<>(excluded);
    for (ReplicaInfo i : replicas) {
      if (i.model().equals(model) && !holders.contains(i.targetId())) {
        out.add(i.targetId());
      }
    }
    return out;
  }
}
