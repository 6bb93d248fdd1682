package io.kvrouter.agent;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.WindowBlocks;
import io.kvrouter.protocol.engine.EngineEvent;
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
 *       missing one) and counted in {@link #unresolved()}; an unknown medium is skipped; each
 *       block's {@code extra_keys} (adapter, cache salt, multimodal items) enter its key through
 *       {@link EngineExtraKeys}, and a run with extra inputs no request can carry (prompt
 *       embeddings) is dropped as unresolved;
 *   <li>hybrid models: only full-attention cache groups enter the prefix index. A store whose
 *       {@code kv_cache_spec_kind} names another kind (sliding window, Mamba, ...) never becomes a
 *       {@link BlocksStored}, and removals from such a group never become {@link BlocksRemoved}:
 *       vLLM publishes the same block hashes in every group, so a sliding-window group dropping a
 *       block that left its window must not remove the full-attention group's copy (groups per vLLM
 *       {@code vllm/distributed/kv_events.py} at 0181ea31: {@code group_idx}, {@code
 *       kv_cache_spec_kind}). A sliding-window group's GPU stores and removals become {@link
 *       WindowBlocks} instead, keyed by the router keys the full-attention group's stores of the
 *       same hashes gave (a hash not seen there is dropped as unresolved), so the tracker knows
 *       where a full-attention hit is reusable;
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
  private final java.util.Set<Integer> otherGroups = new java.util.HashSet<>();
  private final Map<Integer, Integer> windowGroups = new java.util.HashMap<>();
  private final Map<Long, Long> windowHeld = new java.util.LinkedHashMap<>();
  private int windowTokens;
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
        Integer window = windowGroups.get(r.group());
        if (window != null && tier == Tier.GPU) {
          KvEvent k = windowRemoved(window, r.blockHashes());
          if (k != null) {
            out.add(k);
          }
        } else if (tier != null && !otherGroups.contains(r.group())) {
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
    if (!fullAttention(s.groupKind())) {
      otherGroups.add(s.group());
      if (s.slidingWindowGroup() && s.slidingWindow() > 0 && tier == Tier.GPU) {
        windowGroups.put(s.group(), s.slidingWindow());
        windowTokens = s.slidingWindow();
        return windowStored(s.slidingWindow(), hashes);
      }
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
      long[] extras = EngineExtraKeys.of(s, hashes.length);
      if (extras == EngineExtraKeys.UNKEYABLE) {
        unresolved++;
        return null;
      }
      routerKeys = keys.chain(parentKey, s.tokenIds(), bs, extras);
    } else {
      routerKeys = knownKeys(hashes);
      if (routerKeys == null) {
        return null;
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

  /** The router keys already known for every hash, or null (counted unresolved). */
  private long[] knownKeys(long[] hashes) {
    long[] routerKeys = new long[hashes.length];
    for (int i = 0; i < hashes.length; i++) {
      Long k = known.get(hashes[i]);
      if (k == null) {
        unresolved++;
        return null;
      }
      routerKeys[i] = k;
    }
    return routerKeys;
  }

  private KvEvent windowStored(int window, long[] hashes) {
    long[] routerKeys = knownKeys(hashes);
    if (routerKeys == null) {
      return null;
    }
    for (int i = 0; i < hashes.length; i++) {
      windowHeld.put(hashes[i], routerKeys[i]);
    }
    return new WindowBlocks(window, routerKeys, true);
  }

  private KvEvent windowRemoved(int window, long[] hashes) {
    long[] routerKeys = new long[hashes.length];
    int n = 0;
    for (long h : hashes) {
      Long k = windowHeld.remove(h);
      if (k != null) {
        routerKeys[n++] = k;
      }
    }
    return n == 0 ? null : new WindowBlocks(window, java.util.Arrays.copyOf(routerKeys, n), false);
  }

  /** Blocks the sliding-window groups hold (by engine hash). */
  public int windowBlocks() {
    return windowHeld.size();
  }

  /**
   * True for a cache group whose blocks a prompt reuses from its start: full attention and its
   * variants ({@code full_attention}, {@code mla_attention}, {@code sink_full_attention} in vLLM's
   * {@code KVCacheSpecKind}), or a group of unknown kind (an engine with one group says none).
   */
  static boolean fullAttention(String groupKind) {
    return groupKind == null || groupKind.contains("full") || groupKind.contains("mla");
  }

  /** Forgets what the replica holds (engine restart or cache reset). */
  public void clear() {
    for (LinkedHashMap<Long, Held> m : held.values()) {
      m.clear();
    }
    windowHeld.clear();
  }

  /**
   * Events that rebuild the replica's current state from nothing: {@link ReplicaCleared}, then one
   * single-block {@link BlocksStored} per held block, parents first, then one {@link WindowBlocks}
   * with what a sliding-window group holds (a model with one such group). Cost O(held blocks).
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
    if (!windowHeld.isEmpty()) {
      long[] windowKeys = new long[windowHeld.size()];
      int i = 0;
      for (long k : windowHeld.values()) {
        windowKeys[i++] = k;
      }
      out.add(new WindowBlocks(windowTokens, windowKeys, true));
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
