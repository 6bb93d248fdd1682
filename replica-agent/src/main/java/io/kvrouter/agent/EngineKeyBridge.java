package io.kvrouter.agent;

import io.kvrouter.agent.kvevents.EngineEvent;
import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.Tier;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Translates one replica's engine events into router events and keeps what the replica holds, so it
 * can produce a snapshot.
 *
 * <p>Contract (the engine-agnostic keys that llm-d's {@code pkg/kvcache/kvblock} and Dynamo's
 * {@code dynamo-kv-router} ZMQ listener also use; see {@code docs/kv-events.md}, section 4):
 *
 * <ul>
 *   <li>BlockStored: the parent's router key comes from the engine parent hash (ROOT when nil);
 *       keys are chained from the event's {@code token_ids} with the {@link RouterKeyFunction};
 *       with empty token ids (offload connectors) keys are reused when every hash is already known;
 *       a run whose parent or tokens cannot be resolved is dropped (a wrong key is worse than a
 *       missing one) and counted in {@link #unresolved()}; an unknown medium is skipped;
 *   <li>BlockRemoved: passed through by engine hash (trackers bridge removals themselves);
 *   <li>AllBlocksCleared: {@link ReplicaCleared}.
 * </ul>
 *
 * <p>Cost: O(blocks) per event; per held block one map entry (~100 bytes), plus a bounded map of
 * recently seen engine hashes (for parents of later runs). Not thread-safe.
 *
 * <p>Implementation notes: {@code held} is one insertion-ordered map per tier, so a snapshot lists
 * parents before children; {@code known} is an access-ordered LRU map capped at {@code
 * knownCapacity}, kept apart from {@code held} because a parent may be looked up after its block
 * left the tier (vLLM never evicts a referenced parent, but an agent that joined late or another
 * tier may).
 */
public final class EngineKeyBridge {

  private record Held(long routerKey, long parentKey) {}

  private final RouterKeyFunction keys;
  private final int defaultBlockSize;
  private final Map<Tier, LinkedHashMap<Long, Held>> held = new EnumMap<>(Tier.class);
  private final LinkedHashMap<Long, Long> known;
  private long unresolved;

  /**
   * @param keys the router key function
   * @param defaultBlockSize the replica's block size, used when an event carries none
   * @param knownCapacity engine hashes remembered for parent lookup (e.g. 4 × cache blocks)
   */
  public EngineKeyBridge(RouterKeyFunction keys, int defaultBlockSize, int knownCapacity) {
    this.keys = keys;
    this.defaultBlockSize = defaultBlockSize;
    this.known =
        new LinkedHashMap<>(1024, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
            return size() > knownCapacity;
          }
        };
    for (Tier t : Tier.values()) {
      held.put(t, new LinkedHashMap<>());
    }
  }

  /** Translates a batch of engine events; the result may be shorter (dropped runs). */
  public List<KvEvent> translate(List<EngineEvent> events) {
    List<KvEvent> out = new ArrayList<>(events.size());
    for (EngineEvent e : events) {
      if (e instanceof EngineEvent.BlockStored s) {
        KvEvent k = stored(s);
        if (k != null) {
          out.add(k);
        }
      } else if (e instanceof EngineEvent.BlockRemoved r) {
        Tier tier = Tier.fromMedium(r.medium());
        if (tier != null) {
          LinkedHashMap<Long, Held> tierHeld = held.get(tier);
          for (long h : r.blockHashes()) {
            tierHeld.remove(h);
          }
          out.add(new BlocksRemoved(r.blockHashes().clone(), tier));
        }
      } else {
        clear();
        out.add(new ReplicaCleared());
      }
    }
    return out;
  }

  private KvEvent stored(EngineEvent.BlockStored s) {
    Tier tier = Tier.fromMedium(s.medium());
    long[] hashes = s.blockHashes();
    if (tier == null || hashes.length == 0) {
      return null;
    }
    long parentKey = BlocksStored.ROOT;
    if (s.parentHash() != null) {
      Long p = known.get(s.parentHash());
      if (p == null) {
        unresolved++;
        return null;
      }
      parentKey = p;
    }
    int bs = s.blockSize() > 0 ? s.blockSize() : defaultBlockSize;
    long[] routerKeys;
    if (s.tokenIds().length == hashes.length * bs) {
      routerKeys = keys.keys(parentKey, s.tokenIds(), bs, s.loraName());
    } else {
      routerKeys = new long[hashes.length];
      for (int i = 0; i < hashes.length; i++) {
        Long k = known.get(hashes[i]);
        if (k == null) {
          unresolved++;
          return null;
        }
        routerKeys[i] = k;
      }
    }
    LinkedHashMap<Long, Held> tierHeld = held.get(tier);
    long parent = parentKey;
    for (int i = 0; i < hashes.length; i++) {
      known.put(hashes[i], routerKeys[i]);
      tierHeld.put(hashes[i], new Held(routerKeys[i], parent));
      parent = routerKeys[i];
    }
    return new BlocksStored(parentKey, hashes.clone(), routerKeys, tier);
  }

  /** Forgets what the replica holds (engine restart or cache reset). */
  public void clear() {
    for (LinkedHashMap<Long, Held> m : held.values()) {
      m.clear();
    }
  }

  /**
   * Events that rebuild the replica's current state from nothing: {@link ReplicaCleared}, then one
   * single-block {@link BlocksStored} per held block, parents first. Cost O(held blocks).
   */
  public KvEvent[] snapshot() {
    List<KvEvent> out = new ArrayList<>();
    out.add(new ReplicaCleared());
    for (Map.Entry<Tier, LinkedHashMap<Long, Held>> t : held.entrySet()) {
      for (Map.Entry<Long, Held> e : t.getValue().entrySet()) {
        out.add(
            new BlocksStored(
                e.getValue().parentKey(),
                new long[] {e.getKey()},
                new long[] {e.getValue().routerKey()},
                t.getKey()));
      }
    }
    return out.toArray(KvEvent[]::new);
  }

  /** Blocks held in a tier. */
  public int heldBlocks(Tier tier) {
    return held.get(tier).size();
  }

  /** Stored runs dropped because their parent or tokens could not be resolved. */
  public long unresolved() {
    return unresolved;
  }
}
