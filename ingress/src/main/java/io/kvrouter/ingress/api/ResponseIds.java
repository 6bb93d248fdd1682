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
 * <p>The id also names the response's program ({@code <engine id>.kvr.<replica>.<program>}, both
 * base64url): a response continues the program of the response it follows, and the first response
 * of a chain without any other program identity starts one named by its own engine id. So the turns
 * of a Responses conversation are one program at every ingress, again without a table.
 *
 * <p>A client may forge the suffix; it can then only choose among this cluster's replicas, and an
 * engine that does not hold the response answers 404 as it would without the router. Ids without
 * the suffix (not issued by kvrouter) pass unchanged and are routed like any request.
 */
public final class ResponseIds {

  private static final String MARK = ".kvr.";

  private ResponseIds() {}

  /**
   * An engine id, the replica that issued it, and the program it belongs to (null for an id issued
   * without one).
   */
  public record Issued(String engineId, String replicaId, String program) {}

  /** The id the client sees for {@code engineId}, issued by {@code replicaId}. */
  public static String encode(String engineId, String replicaId) {
    return engineId + MARK + b64(replicaId);
  }

  /** The same, naming {@code program} as the response's program (none when null). */
  public static String encode(String engineId, String replicaId, String program) {
    return program == null
        ? encode(engineId, replicaId)
        : encode(engineId, replicaId) + "." + b64(program);
  }

  private static String b64(String text) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  private static String unb64(String text) {
    return new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8);
  }

  /** The engine id and replica of a client id, or null when kvrouter did not issue it. */
  public static Issued decode(String clientId) {
    int at = clientId.lastIndexOf(MARK);
    if (at <= 0) {
      return null;
    }
    try {
      String suffix = clientId.substring(at + MARK.length());
      int dot = suffix.indexOf('.');
      String replica = unb64(dot < 0 ? suffix : suffix.substring(0, dot));
      String program = dot < 0 ? null : unb64(suffix.substring(dot + 1));
      return replica.isEmpty()
          ? null
          : new Issued(
              clientId.substring(0, at),
              replica,
              program == null || program.isEmpty() ? null : program);
    } catch (IllegalArgumentException notOurs) {
      return null;
    }
  }
}
