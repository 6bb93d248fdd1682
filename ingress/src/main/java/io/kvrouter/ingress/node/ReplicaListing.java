package io.kvrouter.ingress.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.tracker.ReplicaLoadSnapshot;
import io.kvrouter.tracker.TrackerDigests;
import io.kvrouter.tracker.actor.KvTracker;
import java.util.Collection;
import java.util.function.ToIntFunction;

/**
 * The body of {@code GET /admin/replicas}: per replica what its agent announced (model, URL, role,
 * APIs, adapters, which engine it is and whether its events line up with the router's keys), the
 * router's block-key settings for its model, and what this node's tracker holds of it (blocks,
 * watermark, load, lag).
 */
final class ReplicaListing {

  private ReplicaListing() {}

  /**
   * @param routerBlockSize the block size this ingress keys each model's prompts with
   */
  static JsonNode of(
      Collection<ReplicaInfo> replicas,
      TrackerDigests digests,
      KvTracker.Loads loads,
      ToIntFunction<String> routerBlockSize) {
    ArrayNode list = JsonNodeFactory.instance.arrayNode();
    for (ReplicaInfo info : replicas) {
      ObjectNode r = list.addObject();
      r.put("replica", info.targetId());
      r.put("model", info.model());
      r.put("url", info.baseUrl());
      r.put("block_size", info.blockSize());
      r.put("kv_events", info.kvEvents());
      info.apis().forEach(r.putArray("apis")::add);
      info.adapters().forEach(r.putArray("adapters")::add);
      r.put("role", info.role());
      r.put("dp_rank", info.dpRank());
      r.put("dp_size", info.dpSize());
      engine(r.putObject("engine"), info.engine());
      ObjectNode keys = r.putObject("keys");
      keys.put("block_size", routerBlockSize.applyAsInt(info.model()));
      ExtraKeys.KINDS.forEach(keys.putArray("extras")::add);
      AlignmentStatus alignment = info.alignment();
      r.putObject("alignment")
          .put("state", alignment.state().label())
          .put("reason", alignment.reason());
      TrackerDigests.ReplicaState state = digests.replicas().get(info.targetId());
      if (state != null) {
        r.put("blocks", state.digest().count());
        r.put("epoch", state.epoch());
        r.put("seq", state.seq());
      }
      ReplicaLoadSnapshot load = loads.byReplica().get(info.targetId());
      if (load != null) {
        r.put("in_flight", load.inFlight());
        r.put("prefill_tokens", load.prefillTokens());
        r.put("decode_tokens", load.decodeTokens());
        r.put("waiting", load.waiting());
        r.put("running", load.running());
        r.put("kv_usage", load.kvUsage());
      }
      Double lag = loads.lagMillis().get(info.targetId());
      if (lag != null) {
        r.put("lag_ms", Math.round(lag * 10) / 10.0);
      }
    }
    return list;
  }

  /** The engine's identity; an unknown block size is null. */
  private static void engine(ObjectNode e, EngineIdentity engine) {
    e.put("kind", engine.kind());
    e.put("version", engine.version());
    e.put("hash_algo", engine.hashAlgo());
    if (engine.blockSize() > 0) {
      e.put("block_size", engine.blockSize());
    } else {
      e.putNull("block_size");
    }
    e.put("speculative_method", engine.speculative());
  }
}
