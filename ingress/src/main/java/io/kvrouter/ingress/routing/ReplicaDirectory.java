package io.kvrouter.ingress.routing;

import io.kvrouter.protocol.ReplicaInfo;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The replicas this ingress can forward to, by target id, as the cluster announced them. Written by
 * the node's membership listener, read by every request; thread-safe, O(1) per lookup.
 */
public final class ReplicaDirectory {

  private final Map<String, ReplicaInfo> replicas = new ConcurrentHashMap<>();

  /** A replica joined (or re-announced itself). */
  public void put(ReplicaInfo info) {
    replicas.put(info.targetId(), info);
  }

  /** A replica left. */
  public void remove(String targetId) {
    replicas.remove(targetId);
  }

  public Optional<ReplicaInfo> get(String targetId) {
    return Optional.ofNullable(replicas.get(targetId));
  }

  /** Where to send a request for {@code targetId}, if it is still known. */
  public Optional<Target> target(String targetId) {
    return get(targetId)
        .map(i -> new Target(i.targetId(), trimSlash(i.baseUrl()), i.acceptsTokenIds(), i.apis()));
  }

  /** Models some replica serves. */
  public Set<String> models() {
    return replicas.values().stream()
        .map(ReplicaInfo::model)
        .collect(Collectors.toUnmodifiableSet());
  }

  /** Every replica known now. */
  public Collection<ReplicaInfo> all() {
    return java.util.List.copyOf(replicas.values());
  }

  /** The block size replicas of {@code model} use, or {@code fallback} when none is known. */
  public int blockSize(String model, int fallback) {
    for (ReplicaInfo i : replicas.values()) {
      if (i.model().equals(model)) {
        return i.blockSize();
      }
    }
    return fallback;
  }

  private static String trimSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }
}
