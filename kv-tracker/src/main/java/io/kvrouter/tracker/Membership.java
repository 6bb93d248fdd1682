package io.kvrouter.tracker;

import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.tracker.index.ReplicaIds;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The replicas a tracker knows: their announced info, their dense ids (shared with the index and
 * the ledger), the candidates of each model in id order, and each model's block-key function.
 *
 * <p>All replicas of a model must share one block size: the first replica of a model fixes its
 * {@link #blockKeys(String)} function, and blocks reported by replicas that disagree would simply
 * never match.
 *
 * <p>A replica its agent announced {@link io.kvrouter.protocol.AlignmentStatus#untrusted()
 * unaligned} is listed by {@link #untrusted()}: its blocks are still applied (so every tracker's
 * digest of it stays the same), but no decision credits it with a cache hit.
 *
 * <p>A replica whose engine runs an EAGLE-style speculative method ({@link
 * io.kvrouter.protocol.EngineIdentity#speculativeDecoding()}) is listed by {@link
 * #dropsLastBlock()}: its engine reuses one matched block less than it holds.
 *
 * <p>Cost: O(replicas of the model) per change, O(replicas) when trust changes; lookups O(1). Not
 * thread-safe.
 */
final class Membership {

  private final ReplicaIds ids = new ReplicaIds();
  private final Map<String, ReplicaInfo> infos = new HashMap<>();
  private final Map<String, int[]> candidatesByModel = new HashMap<>();
  private final Map<String, BlockKeys> keysByModel = new HashMap<>();
  private static final int[] NONE = new int[0];
  private int[] untrusted = NONE;
  private int[] dropsLastBlock = NONE;

  /** The dense ids of every replica seen (including those only seen in events). */
  ReplicaIds ids() {
    return ids;
  }

  /** A replica joined (or re-announced itself; then nothing changes but its info). */
  void up(ReplicaInfo info) {
    String id = info.targetId();
    ReplicaInfo before = infos.put(id, info);
    ids.intern(id);
    if (before != null && !before.model().equals(info.model())) {
      rebuildCandidates(before.model());
    }
    keysByModel.computeIfAbsent(info.model(), m -> BlockKeys.of(m, info.blockSize()));
    rebuildCandidates(info.model());
    if (before == null || before.alignment().untrusted() != info.alignment().untrusted()) {
      rebuildUntrusted();
    }
    if (before == null || drops(before) != drops(info)) {
      rebuildDropsLastBlock();
    }
  }

  /** A replica left: its info and id are released. */
  void down(String targetId) {
    ReplicaInfo info = infos.remove(targetId);
    if (ids.indexOf(targetId) >= 0) {
      ids.release(targetId);
    }
    if (info != null) {
      rebuildCandidates(info.model());
      if (info.alignment().untrusted()) {
        rebuildUntrusted();
      }
      if (drops(info)) {
        rebuildDropsLastBlock();
      }
    }
  }

  /** The ids of the replicas whose index no decision trusts, ascending (usually none). */
  int[] untrusted() {
    return untrusted;
  }

  /**
   * The ids of the replicas whose engine drops the last matched block of a cache hit (EAGLE-style
   * speculative decoding), ascending (usually none).
   */
  int[] dropsLastBlock() {
    return dropsLastBlock;
  }

  /** The ids of the announced replicas of {@code model}, ascending, or null if none. */
  int[] candidates(String model) {
    return candidatesByModel.get(model);
  }

  /** The block-key function of a model its replicas announced, or {@code null}. */
  BlockKeys blockKeys(String model) {
    return keysByModel.get(model);
  }

  /** The announced info of a replica, or null. */
  ReplicaInfo info(int replica) {
    return infos.get(ids.idOf(replica));
  }

  /** Announced replicas' target ids. */
  List<String> announced() {
    return List.copyOf(infos.keySet());
  }

  private void rebuildUntrusted() {
    untrusted =
        infos.values().stream()
            .filter(i -> i.alignment().untrusted())
            .mapToInt(i -> ids.indexOf(i.targetId()))
            .sorted()
            .toArray();
  }

  private static boolean drops(ReplicaInfo info) {
    return info.engine().speculativeDecoding().dropsLastBlock();
  }

  private void rebuildDropsLastBlock() {
    dropsLastBlock =
        infos.values().stream()
            .filter(Membership::drops)
            .mapToInt(i -> ids.indexOf(i.targetId()))
            .sorted()
            .toArray();
  }

  private void rebuildCandidates(String model) {
    int[] c =
        infos.values().stream()
            .filter(i -> i.model().equals(model))
            .mapToInt(i -> ids.indexOf(i.targetId()))
            .sorted()
            .toArray();
    if (c.length == 0) {
      candidatesByModel.remove(model);
    } else {
      candidatesByModel.put(model, c);
    }
  }
}
