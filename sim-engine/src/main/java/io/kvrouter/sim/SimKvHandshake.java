package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simulated engine's side of vLLM's prefill/decode handshake ({@code kv_transfer_params}, as
 * the NIXL connector reads and writes it: vllm-project/vllm {@code
 * vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py}, and as the disaggregation
 * proxies send it: {@code tests/v1/kv_connector/nixl_integration/toy_proxy_server.py}):
 *
 * <ul>
 *   <li>A request carrying {@code do_remote_decode: true} is a prefill for another engine: it is
 *       generated as asked (the proxy asks for one token) and its whole answer carries the
 *       parameters a decode engine needs to pull the KV: {@code do_remote_prefill: true}, {@code
 *       do_remote_decode: false}, {@code remote_block_ids} (the blocks holding the prompt, one list
 *       per KV-cache group), {@code remote_engine_id}, {@code remote_request_id}, {@code
 *       remote_host}, {@code remote_port} and {@code tp_size} ({@code request_finished}).
 *   <li>A request carrying {@code do_remote_prefill: true} with {@code remote_block_ids}, {@code
 *       remote_engine_id}, {@code remote_request_id}, {@code remote_host} and {@code remote_port}
 *       is a decode: the blocks of the prompt this engine lacks are "pulled" (the caller waits
 *       {@link SimKvTransfer#micros}) and enter its cache as computed, so they are published as
 *       stored ({@link SimEngineCore#submitRemotePrefilled}). Missing fields make vLLM log "Got
 *       invalid KVTransferParams" and prefill locally ({@code update_state_after_alloc}); so does
 *       the sim. An empty {@code remote_block_ids} (a prompt shorter than a block) is no transfer.
 * </ul>
 *
 * The sim cannot reach the prefill engine, so it takes the blocks as given; what it checks is the
 * shape of the handshake. Stateless apart from the engine ids; thread-safe.
 */
final class SimKvHandshake {

  private static final Logger log = LoggerFactory.getLogger(SimKvHandshake.class);
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  /** Where NIXL's side channel listens by default ({@code VLLM_NIXL_SIDE_CHANNEL_PORT}). */
  static final int SIDE_CHANNEL_PORT = 5600;

  /** What a request's {@code kv_transfer_params} ask of this engine. */
  enum Part {
    /** No handshake: an ordinary request. */
    NONE,
    /** Prefill for a remote decode: answer with the transfer parameters. */
    PREFILL,
    /** Decode of a remotely prefilled prompt: pull its KV first. */
    DECODE,
    /** A decode whose parameters are incomplete: prefill locally, as vLLM does. */
    INVALID
  }

  private final String host;
  private final String engineId = UUID.randomUUID().toString();

  SimKvHandshake(String host) {
    this.host = host;
  }

  static Part part(JsonNode body) {
    JsonNode p = body.get("kv_transfer_params");
    if (p == null || !p.isObject()) {
      return Part.NONE;
    }
    if (p.path("do_remote_decode").asBoolean(false)) {
      return Part.PREFILL;
    }
    if (!p.path("do_remote_prefill").asBoolean(false)) {
      return Part.NONE;
    }
    for (String f :
        new String[] {"remote_engine_id", "remote_request_id", "remote_host", "remote_port"}) {
      if (p.path(f).isMissingNode() || p.path(f).isNull()) {
        log.warn("Got invalid KVTransferParams: {}. This request will not utilize KVTransfer", p);
        return Part.INVALID;
      }
    }
    return remoteBlocks(p) == 0 ? Part.NONE : Part.DECODE;
  }

  /** Blocks listed in {@code remote_block_ids} (over all groups). */
  static int remoteBlocks(JsonNode params) {
    int n = 0;
    for (JsonNode group : params.path("remote_block_ids")) {
      n += group.isArray() ? group.size() : 1;
    }
    return n;
  }

  /** The parameters a prefill's answer carries for the decode engine. */
  ObjectNode producerParams(String requestId, int rank, int[] blockIds) {
    ObjectNode p = F.objectNode();
    p.put("do_remote_prefill", true);
    p.put("do_remote_decode", false);
    ArrayNode groups = p.putArray("remote_block_ids");
    ArrayNode ids = groups.addArray();
    for (int b : blockIds) {
      ids.add(b);
    }
    p.put("remote_engine_id", engineId + "_dp" + rank);
    p.put("remote_request_id", requestId);
    p.put("remote_host", host);
    p.put("remote_port", SIDE_CHANNEL_PORT + rank);
    p.put("tp_size", 1);
    return p;
  }
}
