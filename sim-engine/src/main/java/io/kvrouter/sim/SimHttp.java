package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Reading and writing the simulated engine's HTTP exchanges (JSON bodies, SSE, errors). */
final class SimHttp {

  static final ObjectMapper JSON = new ObjectMapper();

  private SimHttp() {}

  static void requireMethod(String method, String expected) {
    if (!method.equals(expected)) {
      throw new SimApiError(405, "MethodNotAllowed", "use " + expected, null);
    }
  }

  /** The request body as a JSON object; 400 when it is empty or not an object. */
  static JsonNode readBody(HttpExchange ex) throws IOException {
    try (InputStream in = ex.getRequestBody()) {
      byte[] bytes = in.readAllBytes();
      if (bytes.length == 0) {
        throw SimApiError.badRequest("empty request body", null);
      }
      JsonNode node = JSON.readTree(bytes);
      if (node == null || !node.isObject()) {
        throw SimApiError.badRequest("the body must be a JSON object", null);
      }
      return node;
    }
  }

  /** Starts an event stream (status 200, no length). */
  static OutputStream startStream(HttpExchange ex) throws IOException {
    ex.getResponseHeaders().set("Content-Type", "text/event-stream");
    ex.getResponseHeaders().set("Cache-Control", "no-cache");
    ex.sendResponseHeaders(200, 0);
    return ex.getResponseBody();
  }

  /** One OpenAI SSE frame. */
  static void sse(OutputStream os, JsonNode chunk) throws IOException {
    os.write(("data: " + JSON.writeValueAsString(chunk) + "\n\n").getBytes(StandardCharsets.UTF_8));
    os.flush();
  }

  /** vLLM's error object. */
  static ObjectNode errorBody(SimApiError e) {
    ObjectNode err = JSON.createObjectNode();
    err.put("message", e.getMessage());
    err.put("type", e.type);
    if (e.param == null) {
      err.putNull("param");
    } else {
      err.put("param", e.param);
    }
    err.put("code", e.status);
    return err;
  }

  /** An error response, OpenAI-shaped or (on the Anthropic routes) Anthropic-shaped. */
  static void sendError(HttpExchange ex, SimApiError e, boolean anthropic) throws IOException {
    ObjectNode root;
    if (anthropic) {
      root = SimAnthropic.error(e);
    } else {
      root = JSON.createObjectNode();
      root.set("error", errorBody(e));
    }
    try {
      sendJson(ex, e.status, root);
    } catch (IOException ignored) {
      // headers already sent (a stream broke): nothing more to say
    }
  }

  static void sendJson(HttpExchange ex, int status, JsonNode body) throws IOException {
    send(ex, status, "application/json", JSON.writeValueAsBytes(body));
  }

  static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      try (OutputStream os = ex.getResponseBody()) {
        os.write(body);
      }
    }
  }
}
