package io.kvrouter.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * What the tests' vLLM doubles (written apart from the simulated engine) share: how they read a
 * completion's {@code prompt} (token ids as given, text as its UTF-8 bytes offset by 3, ids 3..258,
 * their stand-in tokenizer) and how they answer.
 */
public final class EngineDoubles {

  private EngineDoubles() {}

  /** The token ids of a completion request's {@code prompt} field. */
  public static int[] tokens(JsonNode prompt) {
    if (prompt.isArray()) {
      int[] tokens = new int[prompt.size()];
      for (int i = 0; i < tokens.length; i++) {
        tokens[i] = prompt.get(i).asInt();
      }
      return tokens;
    }
    byte[] utf8 = prompt.asText().getBytes(StandardCharsets.UTF_8);
    int[] tokens = new int[utf8.length];
    for (int i = 0; i < utf8.length; i++) {
      tokens[i] = (utf8[i] & 0xFF) + 3;
    }
    return tokens;
  }

  /** Answers {@code status} with {@code body} as JSON (no body when it is empty). */
  public static void respond(HttpExchange ex, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
    if (b.length > 0) {
      try (OutputStream os = ex.getResponseBody()) {
        os.write(b);
      }
    }
  }
}
