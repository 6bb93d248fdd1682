package io.kvrouter.ingress.pd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The request bodies of vLLM's prefill/decode handshake, as vLLM's disaggregation proxies write
 * them (vllm-project/vllm {@code tests/v1/kv_connector/nixl_integration/toy_proxy_server.py} and
 * {@code examples/online_serving/disaggregated_serving/disagg_proxy_multiturn.py}):
 *
 * <ul>
 *   <li>the prefill request is the client's request, not streamed, asking for one token ({@code
 *       max_tokens} and {@code max_completion_tokens} 1, no {@code stream_options}, no {@code
 *       min_tokens} or {@code min_completion_tokens}, which a prefill engine does not take), with
 *       {@code kv_transfer_params: {do_remote_decode: true, do_remote_prefill: false,
 *       remote_engine_id: null, remote_block_ids: null, remote_host: null, remote_port: null}};
 *   <li>its answer carries the {@code kv_transfer_params} the NIXL connector's {@code
 *       request_finished} returns ({@code do_remote_prefill: true}, {@code remote_block_ids},
 *       {@code remote_engine_id}, {@code remote_request_id}, {@code remote_host}, {@code
 *       remote_port}, {@code tp_size}: {@code
 *       vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py});
 *   <li>the decode request is the client's request unchanged but for those {@code
 *       kv_transfer_params}.
 * </ul>
 *
 * Plain functions over Jackson trees; the caller's body is never modified.
 */
public final class Handoff {

  private Handoff() {}

  /** The prefill hop's body, from the client's OpenAI body. */
  public static ObjectNode prefillBody(ObjectNode client) {
    ObjectNode body = client.deepCopy();
    ObjectNode kv = body.putObject("kv_transfer_params");
    kv.put("do_remote_decode", true);
    kv.put("do_remote_prefill", false);
    kv.putNull("remote_engine_id");
    kv.putNull("remote_block_ids");
    kv.putNull("remote_host");
    kv.putNull("remote_port");
    body.put("stream", false);
    body.put("max_tokens", 1);
    if (body.has("max_completion_tokens")) {
      body.put("max_completion_tokens", 1);
    }
    body.remove("stream_options");
    body.remove("min_tokens");
    body.remove("min_completion_tokens");
    return body;
  }

  /**
   * The transfer parameters of a prefill's answer, or null when it has none a decode engine can use
   * (not an object, or not asking for a remote prefill).
   */
  public static JsonNode transferParams(JsonNode prefillAnswer) {
    JsonNode p = prefillAnswer == null ? null : prefillAnswer.get("kv_transfer_params");
    if (p == null || !p.isObject() || !p.path("do_remote_prefill").asBoolean(false)) {
      return null;
    }
    return p;
  }

  /** The decode hop's body: the client's body carrying the prefill's transfer parameters. */
  public static ObjectNode decodeBody(ObjectNode client, JsonNode transferParams) {
    ObjectNode body = client.deepCopy();
    body.set("kv_transfer_params", transferParams.deepCopy());
    return body;
  }
}
