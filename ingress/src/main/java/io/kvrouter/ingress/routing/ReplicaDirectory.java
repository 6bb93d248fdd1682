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

  /** Models with a replica whose role is not {@code both}; rebuilt on every change. */
  private volatile Set<String> disaggregated = Set.of();

  /** Models with a replica of role {@code prefill}; rebuilt on every change. */
  private volatile Set<String> prefilled = Set.of();

  /**
   * Each LoRA adapter some replica has loaded, with the base model it is loaded on and the replicas
   * holding it; rebuilt on every change. A name that is also a base model is not an adapter here.
   */
  private volatile Map<String, Adapter> adapters = Map.of();

  /**
   * A LoRA adapter as the replicas announce it.
   *
   * @param baseModel the model of the replicas it is loaded on
   * @param holders their target ids
   */
  public record Adapter(String baseModel, Set<String> holders) {}

  /** A replica joined (or re-announced itself). */
  public void put(ReplicaInfo info) {
    replicas.put(info.targetId(), info);
    changed();
  }

  /** A replica left. */
  public void remove(String targetId) {
    replicas.remove(targetId);
    changed();
  }

  private void changed() {
    Set<String> bases =
        replicas.values().stream().map(ReplicaInfo::model).collect(Collectors.toSet());
    Map<String, Adapter> byName = new java.util.HashMap<>();
    for (ReplicaInfo i : replicas.values()) {
      for (String a : i.adapters()) {
        if (!bases.contains(a)) {
          Adapter known = byName.get(a);
          Set<String> holders = new java.util.HashSet<>(known == null ? Set.of() : known.holders());
          holders.add(i.targetId());
          // An adapter loaded on replicas of two base models is taken as the first one's.
          byName.put(a, new Adapter(known == null ? i.model() : known.baseModel(), holders));
        }
      }
    }
    adapters = Map.copyOf(byName);
    disaggregated =
        replicas.values().stream()
            .filter(i -> !i.role().equals(ReplicaInfo.BOTH))
            .map(ReplicaInfo::model)
            .collect(Collectors.toUnmodifiableSet());
    prefilled =
        replicas.values().stream()
            .filter(i -> i.role().equals(ReplicaInfo.PREFILL))
            .map(ReplicaInfo::model)
            .collect(Collectors.toUnmodifiableSet());
  }

  /** True when some replica of {@code model} is not of role {@code both} (roles filter routing). */
  public boolean rolesMatter(String model) {
    return disaggregated.contains(model);
  }

  /**
   * True when {@code model}'s requests are disaggregated: some replica of it is a prefill replica
   * (as Dynamo's frontend starts its prefill router once a prefill worker registers).
   */
  public boolean disaggregated(String model) {
    return prefilled.contains(model);
  }

  public Optional<ReplicaInfo> get(String targetId) {
    return Optional.ofNullable(replicas.get(targetId));
  }

  /** Where to send a request for {@code targetId}, if it is still known. */
  public Optional<Target> target(String targetId) {
    return get(targetId)
        .map(
            i ->
                new Target(
                    i.targetId(),
                    trimSlash(i.baseUrl()),
                    i.acceptsTokenIds(),
                    i.apis(),
                    i.dataParallel() ? i.dpRank() : Target.NO_RANK));
  }

  /** Models some replica serves: base models and the LoRA adapters loaded on them. */
  public Set<String> models() {
    Set<String> out =
        replicas.values().stream().map(ReplicaInfo::model).collect(Collectors.toSet());
    out.addAll(adapters.keySet());
    return Set.copyOf(out);
  }

  /**
   * The LoRA adapter {@code model} names, if some replica has it loaded (and it is no base model).
   */
  public Optional<Adapter> adapter(String model) {
    return Optional.ofNullable(adapters.get(model));
  }

  /** The base model of {@code model}: the model an adapter is loaded on, else {@code model}. */
  public String baseModel(String model) {
    Adapter a = adapters.get(model);
    return a == null ? model : a.baseModel();
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
