package io.kvrouter.ingress.routing;

import io.kvrouter.protocol.ReplicaInfo;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The replicas this ingress can forward to, by target id, as the cluster announced them.
 *
 * <p>One owner: only the node's {@code TrackerFeeds} actor calls {@link #put} and {@link #remove};
 * every request reads. Each change builds a new immutable {@link Snapshot} (the replicas and what
 * is derived from them: models, adapters, roles) and publishes it through one volatile field, so a
 * reader sees one consistent state without locks or copies, and no reader can change it. Cost: a
 * change rebuilds the snapshot, O(replicas); a lookup is O(1); {@link #all} returns the snapshot's
 * list without copying.
 */
public final class ReplicaDirectory {

  /**
   * One published state: the replicas by target id, in announcement order for {@link #all}, and
   * what is derived from them.
   *
   * @param byTarget the replicas by target id
   * @param all the same replicas as a list
   * @param models base models and loaded adapters
   * @param disaggregated models with a replica whose role is not {@code both}
   * @param prefilled models with a replica of role {@code prefill}
   * @param adapters each LoRA adapter some replica has loaded (a name that is also a base model is
   *     not an adapter here)
   */
  private record Snapshot(
      Map<String, ReplicaInfo> byTarget,
      List<ReplicaInfo> all,
      Set<String> models,
      Set<String> disaggregated,
      Set<String> prefilled,
      Map<String, Adapter> adapters) {

    static final Snapshot EMPTY = of(new LinkedHashMap<>());

    static Snapshot of(LinkedHashMap<String, ReplicaInfo> replicas) {
      Set<String> bases = new HashSet<>();
      Set<String> disaggregated = new HashSet<>();
      Set<String> prefilled = new HashSet<>();
      for (ReplicaInfo i : replicas.values()) {
        bases.add(i.model());
        if (!i.role().equals(ReplicaInfo.BOTH)) {
          disaggregated.add(i.model());
        }
        if (i.role().equals(ReplicaInfo.PREFILL)) {
          prefilled.add(i.model());
        }
      }
      Map<String, Adapter> byName = new HashMap<>();
      for (ReplicaInfo i : replicas.values()) {
        for (String a : i.adapters()) {
          if (!bases.contains(a)) {
            Adapter known = byName.get(a);
            Set<String> holders = new HashSet<>(known == null ? Set.of() : known.holders());
            holders.add(i.targetId());
            // An adapter loaded on replicas of two base models is taken as the first one's.
            byName.put(
                a, new Adapter(known == null ? i.model() : known.baseModel(), Set.copyOf(holders)));
          }
        }
      }
      Set<String> models = new HashSet<>(bases);
      models.addAll(byName.keySet());
      return new Snapshot(
          Collections.unmodifiableMap(new LinkedHashMap<>(replicas)),
          List.copyOf(replicas.values()),
          Set.copyOf(models),
          Set.copyOf(disaggregated),
          Set.copyOf(prefilled),
          Map.copyOf(byName));
    }
  }

  /** The current state; replaced whole on every change, by the one writer. */
  private volatile Snapshot current = Snapshot.EMPTY;

  /**
   * A LoRA adapter as the replicas announce it.
   *
   * @param baseModel the model of the replicas it is loaded on
   * @param holders their target ids
   */
  public record Adapter(String baseModel, Set<String> holders) {}

  /** A replica joined (or re-announced itself). Called by the directory's one writer only. */
  public void put(ReplicaInfo info) {
    if (info.equals(current.byTarget().get(info.targetId()))) {
      return; // a periodic re-announcement that changes nothing
    }
    LinkedHashMap<String, ReplicaInfo> next = new LinkedHashMap<>(current.byTarget());
    next.put(info.targetId(), info);
    current = Snapshot.of(next);
  }

  /** A replica left. Called by the directory's one writer only. */
  public void remove(String targetId) {
    if (current.byTarget().containsKey(targetId)) {
      LinkedHashMap<String, ReplicaInfo> next = new LinkedHashMap<>(current.byTarget());
      next.remove(targetId);
      current = Snapshot.of(next);
    }
  }

  /** True when some replica of {@code model} is not of role {@code both} (roles filter routing). */
  public boolean rolesMatter(String model) {
    return current.disaggregated().contains(model);
  }

  /**
   * True when {@code model}'s requests are disaggregated: some replica of it is a prefill replica
   * (as Dynamo's frontend starts its prefill router once a prefill worker registers).
   */
  public boolean disaggregated(String model) {
    return current.prefilled().contains(model);
  }

  public Optional<ReplicaInfo> get(String targetId) {
    return Optional.ofNullable(current.byTarget().get(targetId));
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
    return current.models();
  }

  /**
   * The LoRA adapter {@code model} names, if some replica has it loaded (and it is no base model).
   */
  public Optional<Adapter> adapter(String model) {
    return Optional.ofNullable(current.adapters().get(model));
  }

  /** The base model of {@code model}: the model an adapter is loaded on, else {@code model}. */
  public String baseModel(String model) {
    Adapter a = current.adapters().get(model);
    return a == null ? model : a.baseModel();
  }

  /** Every replica known now (an immutable list). */
  public Collection<ReplicaInfo> all() {
    return current.all();
  }

  /** The block size replicas of {@code model} use, or {@code fallback} when none is known. */
  public int blockSize(String model, int fallback) {
    for (ReplicaInfo i : current.all()) {
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
