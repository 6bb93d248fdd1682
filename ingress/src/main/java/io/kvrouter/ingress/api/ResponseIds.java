package io.kvrouter.ingress.api;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Response ids that say which replica holds the response. vLLM keeps a Responses API conversation
 * in the memory of the engine that answered it ({@code previous_response_id} is looked up in that
 * server's store: vllm-project/vllm {@code vllm/entrypoints/openai/responses/serving.py}), so a
 * follow-up must reach the same engine. Rather than remember ids in a table every ingress must
 * share, the ingress hands the client {@code <engine id>.kvr.<replica, base64url>}: any ingress, at
 * any time, even one started after the first turn, reads the replica back from the id, and strips
 * the suffix before the engine sees it. No state, no replication delay, nothing to expire.
 *
 * <p>A client may forge the suffix; it can then only choose among this cluster's replicas, and an
 * engine that does not hold the response answers 404 as it would without the router. Ids without
 * the suffix (not issued by kvrouter) pass unchanged and are routed like any request.
 */
public final class ResponseIds {

  private static final String MARK = ".kvr.";

  private ResponseIds() {}

  /** An engine id and the replica that issued it. */
  public record Issued(String engineId, String replicaId) {}

  /** The id the client sees for {@code engineId}, issued by {@code replicaId}. */
  public static String encode(String engineId, String replicaId) {
    return engineId
        + MARK
        + Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString(replicaId.getBytes(StandardCharsets.UTF_8));
  }

  /** The engine id and replica of a client id, or null when kvrouter did not issue it. */
  public static Issued decode(String clientId) {
    int at = clientId.lastIndexOf(MARK);
    if (at <= 0) {
      return null;
    }
    try {
      String replica =
          new String(
              Base64.getUrlDecoder().decode(clientId.substring(at + MARK.length())),
              StandardCharsets.UTF_8);
      return replica.isEmpty() ? null : new Issued(clientId.substring(0, at), replica);
    } catch (IllegalArgumentException notOurs) {
      return null;
    }
  }
}
