package io.kvrouter.agent.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.agent.kvevents.EngineStreamHandler;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns TensorRT-LLM's KV cache events, as {@code trtllm-serve} hands them out in JSON, into the
 * engine batches the vLLM path produces, and watches their event ids for gaps and restarts. Plain
 * Java, no I/O; not thread-safe (the {@link TrtllmEventPoller}'s thread owns it).
 *
 * <p>The format (NVIDIA/TensorRT-LLM {@code tensorrt_llm/_utils.py}, {@code KVCacheEventSerializer}
 * at {@code ed53795b}): each event is {@code {"event_id", "data", "window_size",
 * "attention_dp_rank"?}}, {@code data} one of
 *
 * <ul>
 *   <li>{@code {"type":"created","num_blocks_per_cache_level":[..]}}: the cache of one window size
 *       was made; a new process always begins with these (ids from 0);
 *   <li>{@code {"type":"stored","parent_hash":h|null,"blocks":[{"type":"stored_block",
 *       "block_hash","tokens":[{"token_id","token_extra_id"}..],"cache_level","priority"}..]}}
 *       (newer builds add {@code lora_id}, {@code mm_keys}, {@code cache_salt} per block);
 *   <li>{@code {"type":"removed","block_hashes":[..]}};
 *   <li>{@code {"type":"updated","block_hash","cache_level":{"old_value","new_value"}|null,
 *       "priority":{..}|null}}.
 * </ul>
 *
 * Event ids come from one counter per attention-DP rank's {@code KVCacheEventManager} ({@code
 * mEventId++} for every event, {@code cpp/tensorrt_llm/batch_manager/kvCacheEventManager.cpp} at
 * {@code 8c498e94}), so they are consecutive unless events were lost: its queue keeps at most
 * {@code event_buffer_max_size} events and drops the oldest beyond that. Cache levels are {@code
 * kPrimaryLevel = 0} (GPU) and {@code kSecondaryLevel = 1} (host memory) ({@code
 * cpp/include/tensorrt_llm/batch_manager/kvCacheManager.h}); a block offloaded to host memory or
 * onboarded back is an {@code updated} event with that level change ({@code
 * WindowBlockManager::getFreeBlock}, {@code kvCacheManager.cpp} at {@code b35ac1b6}).
 *
 * <p>What comes out:
 *
 * <ul>
 *   <li>stored: one {@link EngineEvent.BlockStored} of the event's leading <em>full</em> blocks (as
 *       many tokens as the replica's block size; TensorRT-LLM also stores a prompt's partial last
 *       block, which no router key covers, and so does Dynamo's publisher skip it: {@code
 *       components/src/dynamo/trtllm/publisher.py}, {@code _handle_kv_event}, ai-dynamo/dynamo at
 *       {@code ecd29799}), with its token ids, {@code medium} GPU for level 0 and CPU for level 1.
 *       A block with more tokens than the block size sets the run's block size (the alignment probe
 *       then names the mismatch). A block whose hash has inputs a request cannot carry to the
 *       router (an adapter, multimodal items, a cache salt, token extra ids) makes the run
 *       unkeyable: it is marked so and the key bridge drops it (a wrong key is worse than none);
 *   <li>removed: one {@link EngineEvent.BlockRemoved} per level the hashes were stored at; hashes
 *       never forwarded (partial blocks, runs before the agent joined) are left out;
 *   <li>updated with a level change: the block leaves its old tier and is stored in the new one
 *       (hash only: the key bridge reuses the router key it knows); priority changes are ignored;
 *   <li>events of another window size than the largest one the created events named are dropped (a
 *       sliding-window layer group's blocks do not serve a prefix; Dynamo filters the same); events
 *       of another attention-DP rank than the replica's are ignored.
 * </ul>
 *
 * <p>Continuity (TensorRT-LLM has no replay and no snapshot): an id one above the last goes on; an
 * id at or below the last is a new process ({@link EngineStreamHandler#onEngineRestart}: the
 * replica is cleared, a restarting engine announces nothing); an id further on is a gap ({@link
 * EngineStreamHandler#onUnrecoverableGap}: the replica is cleared too, and rebuilt from the events
 * that follow, since what the lost events stored or removed cannot be known). The first event the
 * agent ever sees must be id 0, or what came before it is a gap. Events of one poll become one
 * batch, split where a restart or gap falls.
 */
public final class TrtllmEventTranslator {

  /** What one poll's events did, for the poller's counters and its listener. */
  public record Outcome(int events, int ignored, int malformed, boolean restarted, boolean gap) {}

  private static final String[] MEDIA = {"GPU", "CPU"};

  private final int blockSize;
  private final int rank;
  private final EngineStreamHandler handler;
  private final Map<Long, Integer> levels = new HashMap<>();
  private long lastId = -1;
  private Integer maxWindow;
  private List<EngineEvent> pending = new ArrayList<>();

  /**
   * @param blockSize the replica's block size (TensorRT-LLM's {@code tokens_per_block})
   * @param rank the attention-DP rank whose events are the replica's (0 without attention DP)
   * @param handler the replica's pipeline
   */
  public TrtllmEventTranslator(int blockSize, int rank, EngineStreamHandler handler) {
    if (blockSize < 1) {
      throw new IllegalArgumentException("block size must be positive, was " + blockSize);
    }
    this.blockSize = blockSize;
    this.rank = rank;
    this.handler = handler;
  }

  /** Takes one poll's answer (a JSON array of events, oldest first). */
  public Outcome accept(JsonNode events) {
    if (events == null || !events.isArray()) {
      return new Outcome(0, 0, 1, false, false);
    }
    int taken = 0;
    int ignored = 0;
    int malformed = 0;
    boolean restarted = false;
    boolean gap = false;
    for (JsonNode e : events) {
      JsonNode id = e.path("event_id");
      JsonNode data = e.path("data");
      if (!id.canConvertToLong() || !data.isObject()) {
        malformed++;
        continue;
      }
      if (e.path("attention_dp_rank").asInt(0) != rank) {
        ignored++;
        continue;
      }
      long eventId = id.asLong();
      if (eventId <= lastId) {
        flush();
        handler.onEngineRestart(lastId, eventId);
        forget();
        restarted = true;
      } else if (eventId != lastId + 1) {
        flush();
        handler.onUnrecoverableGap(lastId + 1, eventId);
        levels.clear();
        gap = true;
      }
      lastId = eventId;
      taken++;
      if (!translate(e, data)) {
        malformed++;
      }
    }
    flush();
    return new Outcome(taken, ignored, malformed, restarted, gap);
  }

  /** The last event id taken, -1 before any. */
  public long lastEventId() {
    return lastId;
  }

  /** Blocks forwarded and not removed since, by engine hash (both levels). */
  public int forwardedBlocks() {
    return levels.size();
  }

  private void forget() {
    levels.clear();
    maxWindow = null;
  }

  /** Translates one event's data; false when it is malformed. */
  private boolean translate(JsonNode event, JsonNode data) {
    String type = data.path("type").asText("");
    JsonNode window = event.path("window_size");
    if (type.equals("created")) {
      if (window.canConvertToInt()) {
        maxWindow = maxWindow == null ? window.asInt() : Math.max(maxWindow, window.asInt());
      }
      return true;
    }
    if (window.canConvertToInt() && maxWindow != null && window.asInt() != maxWindow) {
      return true; // another layer group's window: not a prefix cache
    }
    return switch (type) {
      case "stored" -> stored(data);
      case "removed" -> removed(data.path("block_hashes"));
      case "updated" -> updated(data);
      default -> false;
    };
  }

  private boolean stored(JsonNode data) {
    JsonNode parent = data.path("parent_hash");
    JsonNode blocks = data.path("blocks");
    if (!blocks.isArray() || !(parent.isNull() || parent.isMissingNode() || parent.isNumber())) {
      return false;
    }
    int size = blockSize;
    if (!blocks.isEmpty()) {
      size = Math.max(blockSize, blocks.get(0).path("tokens").size());
    }
    List<Long> hashes = new ArrayList<>();
    List<Integer> tokens = new ArrayList<>();
    int level = -1;
    boolean unkeyable = false;
    for (JsonNode b : blocks) {
      JsonNode hash = b.path("block_hash");
      JsonNode ts = b.path("tokens");
      int l = b.path("cache_level").asInt(0);
      if (!hash.isNumber() || !ts.isArray() || l < 0 || l >= MEDIA.length) {
        return false;
      }
      if (ts.size() != size || (level >= 0 && l != level)) {
        break; // a partial block ends the run; a change of level starts another (never seen)
      }
      level = l;
      for (JsonNode t : ts) {
        tokens.add(t.path("token_id").asInt());
        unkeyable |= t.path("token_extra_id").asLong(0) != 0;
      }
      unkeyable |= hasExtraInputs(b);
      hashes.add(hash.bigIntegerValue().longValue());
    }
    if (hashes.isEmpty()) {
      return true;
    }
    long[] hs = hashes.stream().mapToLong(Long::longValue).toArray();
    for (long h : hs) {
      levels.put(h, level);
    }
    pending.add(
        new EngineEvent.BlockStored(
            hs,
            parent.isNumber() ? parent.bigIntegerValue().longValue() : null,
            tokens.stream().mapToInt(Integer::intValue).toArray(),
            size,
            null,
            MEDIA[level],
            unkeyable ? unkeyable(hs.length) : null,
            0,
            null,
            0));
    return true;
  }

  /**
   * True when the block's hash mixes in more than its tokens: an adapter ({@code lora_id}),
   * multimodal items ({@code mm_keys}) or a cache salt ({@code cache_salt}), as {@code
   * BlockKeyHasher::hash} does ({@code kvCacheManager.cpp} at {@code b35ac1b6}).
   */
  private static boolean hasExtraInputs(JsonNode block) {
    JsonNode lora = block.path("lora_id");
    JsonNode mm = block.path("mm_keys");
    JsonNode salt = block.path("cache_salt");
    return (lora.isNumber() && lora.asLong() != 0)
        || (mm.isArray() && !mm.isEmpty())
        || !(salt.isMissingNode() || salt.isNull());
  }

  /** Extra keys that the key bridge cannot key: the run is dropped, never keyed wrongly. */
  private static List<List<EngineEvent.ExtraKey>> unkeyable(int blocks) {
    List<List<EngineEvent.ExtraKey>> out = new ArrayList<>(blocks);
    for (int i = 0; i < blocks; i++) {
      out.add(List.of(new EngineEvent.OpaqueKey("TensorRT-LLM hash input beyond tokens")));
    }
    return out;
  }

  private boolean removed(JsonNode hashes) {
    if (!hashes.isArray()) {
      return false;
    }
    List<List<Long>> byLevel = List.of(new ArrayList<>(), new ArrayList<>());
    for (JsonNode h : hashes) {
      if (!h.isNumber()) {
        return false;
      }
      Integer level = levels.remove(h.bigIntegerValue().longValue());
      if (level != null) {
        byLevel.get(level).add(h.bigIntegerValue().longValue());
      }
    }
    for (int l = 0; l < MEDIA.length; l++) {
      if (!byLevel.get(l).isEmpty()) {
        pending.add(
            new EngineEvent.BlockRemoved(
                byLevel.get(l).stream().mapToLong(Long::longValue).toArray(), MEDIA[l]));
      }
    }
    return true;
  }

  private boolean updated(JsonNode data) {
    JsonNode hash = data.path("block_hash");
    if (!hash.isNumber()) {
      return false;
    }
    JsonNode diff = data.path("cache_level");
    if (!diff.isObject()) {
      return true; // a priority change: nothing the router weighs
    }
    long h = hash.bigIntegerValue().longValue();
    int to = diff.path("new_value").asInt(-1);
    Integer from = levels.get(h);
    if (from == null || to < 0 || to >= MEDIA.length || to == from) {
      return to >= 0;
    }
    levels.put(h, to);
    long[] one = {h};
    pending.add(new EngineEvent.BlockRemoved(one, MEDIA[from]));
    pending.add(new EngineEvent.BlockStored(one, null, new int[0], blockSize, null, MEDIA[to]));
    return true;
  }

  private void flush() {
    if (!pending.isEmpty()) {
      handler.onBatch(
          lastId, new EngineEventBatch(System.currentTimeMillis() / 1000.0, pending, rank));
      pending = new ArrayList<>();
    }
  }
}
