package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.LongLongMap;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The KV blocks of the requests one router has in flight, per replica, each block counted once
 * however many of those requests share it: Dynamo's per-worker active sequences with its default
 * {@code router_assume_kv_reuse = true} (ai-dynamo/dynamo {@code lib/llm/src/kv_router/sequence.rs}
 * at 581ee33e, {@code ActiveSequences}: {@code add_request}, {@code new_blocks}, {@code
 * active_blocks}, {@code free}).
 *
 * <p>A request's blocks are its prompt's full-block keys; they count from the reservation until the
 * request ends (not only until its prefill), as Dynamo frees them only in {@code free}. Output
 * blocks are not tracked ({@code router_track_output_blocks} is off by default).
 *
 * <p>Cost: O(prompt blocks) per add, release and {@link #newBlocks} query; 20 to 30 bytes per
 * distinct active block per replica plus the request's key array. Not thread-safe.
 */
final class ActiveBlocks {

  private record Active(int replica, long[] keys) {}

  private final Map<String, Active> requests = new HashMap<>();
  private LongLongMap[] refs = new LongLongMap[0];

  private LongLongMap refs(int replica) {
    if (replica >= refs.length) {
      refs = Arrays.copyOf(refs, Math.max(replica + 1, refs.length * 2));
    }
    if (refs[replica] == null) {
      refs[replica] = new LongLongMap(1024);
    }
    return refs[replica];
  }

  /** Request {@code requestId} holds the first {@code count} of {@code keys} on {@code replica}. */
  void add(String requestId, int replica, long[] keys, int count) {
    long[] own = Arrays.copyOf(keys, count);
    if (requests.putIfAbsent(requestId, new Active(replica, own)) != null) {
      return; // Dynamo ignores a duplicate add
    }
    LongLongMap r = refs(replica);
    for (long k : own) {
      r.put(k, r.get(k, 0) + 1, 0);
    }
  }

  /** The request ended: its blocks no longer count unless another active request holds them. */
  void remove(String requestId) {
    Active a = requests.remove(requestId);
    if (a == null || a.replica >= refs.length || refs[a.replica] == null) {
      return;
    }
    LongLongMap r = refs[a.replica];
    for (long k : a.keys) {
      long n = r.get(k, 0);
      if (n <= 1) {
        r.remove(k, 0);
      } else {
        r.put(k, n - 1, 0);
      }
    }
  }

  /** Distinct blocks active on {@code replica}. */
  int activeBlocks(int replica) {
    return replica < refs.length && refs[replica] != null ? refs[replica].size() : 0;
  }

  /** Of the first {@code count} {@code keys}, how many are not active on {@code replica}. */
  int newBlocks(int replica, long[] keys, int count) {
    if (replica >= refs.length || refs[replica] == null) {
      return count;
    }
    LongLongMap r = refs[replica];
    int fresh = 0;
    for (int i = 0; i < count; i++) {
      if (r.get(keys[i], 0) == 0) {
        fresh++;
      }
    }
    return fresh;
  }

  /** The replica left: forget its requests. */
  void dropReplica(int replica) {
    requests.values().removeIf(a -> a.replica == replica);
    if (replica < refs.length) {
      refs[replica] = null;
    }
  }
}
