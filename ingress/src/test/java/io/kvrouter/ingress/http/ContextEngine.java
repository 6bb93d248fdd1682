package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * An OpenAI-compatible engine on loopback whose answers can be checked across engines: it tokenizes
 * as the ingress does ({@code model}'s tokenizer and chat template, vLLM's {@code
 * continue_final_message} included), and its token at each position is a function of the tokens
 * before it alone (prompt and generated so far), drawn from words that encode back to the same
 * tokens. Two such engines given the same context say the same thing, so an answer cut on one and
 * continued on the other must equal the uncut one. It streams one token per event, and can die
 * after a number of tokens: by dropping the connection, by going silent, by saying so in an error
 * event, or after streaming a tool call.
 */
final class ContextEngine implements AutoCloseable {

  enum Mode {
    OK,
    /** Drops the connection after {@link #cutAfter} tokens. */
    CUT,
    /** Goes silent after {@link #cutAfter} tokens until closed. */
    STALL,
    /** Streams the start of a tool call, then drops the connection. */
    TOOL_CALL_CUT,
    /**
     * Ends with an error event and {@code [DONE]} after {@link #cutAfter} tokens, as vLLM's server
     * does when its engine core dies.
     */
    ERROR_EVENT
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] WORDS = {
    " red", " green", " blue", " cat", " dog", " sun", " moon", " tree", " river", " stone"
  };

  private final HttpServer server;
  private final ModelTokenizer model;
  private final String name;
  private final int[] vocabulary;
  private final CountDownLatch closed = new CountDownLatch(1);
  final List<JsonNode> bodies = new CopyOnWriteArrayList<>();
  volatile Mode mode;
  volatile int cutAfter = 3;

  ContextEngine(String name, ModelTokenizer model, Mode mode) throws IOException {
    this.name = name;
    this.model = model;
    this.mode = mode;
    this.vocabulary = new int[WORDS.length];
    for (int i = 0; i < WORDS.length; i++) {
      int[] ids = model.tokenizer().encode(WORDS[i], false);
      if (ids.length != 1) {
        throw new IllegalStateException("'" + WORDS[i] + "' is not one token");
      }
      vocabulary[i] = ids[0];
    }
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/", this::handle);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** The token that follows {@code context}: a function of it alone. */
  int next(int[] context) {
    long h = 1125899906842597L;
    for (int t : context) {
      h = 31 * h + t;
    }
    h ^= h >>> 29;
    return vocabulary[(int) Math.floorMod(h, (long) vocabulary.length)];
  }

  private int indexOf(int token) {
    for (int i = 0; i < vocabulary.length; i++) {
      if (vocabulary[i] == token) {
        return i;
      }
    }
    throw new IllegalArgumentException("not a word of this engine: " + token);
  }

  @SuppressWarnings("unchecked")
  private int[] prompt(JsonNode body, boolean chat) {
    if (!chat) {
      JsonNode p = body.get("prompt");
      if (p.isTextual()) {
        return model.encodePrompt(p.asText());
      }
      int[] ids = new int[p.size()];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = p.get(i).asInt();
      }
      return ids;
    }
    List<Map<String, Object>> messages = JSON.convertValue(body.get("messages"), List.class);
    if (!body.path("continue_final_message").asBoolean(false)) {
      return model.encodeChat(messages, null, true, Map.of());
    }
    // vLLM's continue_final_message: the last (assistant) message left open for the model.
    List<Map<String, Object>> before = new ArrayList<>(messages.subList(0, messages.size() - 1));
    int[] head = model.encodeChat(before, null, true, Map.of());
    int[] open =
        model.tokenizer().encode((String) messages.get(messages.size() - 1).get("content"), false);
    int[] all = Arrays.copyOf(head, head.length + open.length);
    System.arraycopy(open, 0, all, head.length, open.length);
    return all;
  }

  private void handle(HttpExchange exchange) throws IOException {
    JsonNode body = JSON.readTree(exchange.getRequestBody().readAllBytes());
    bodies.add(body);
    boolean chat = exchange.getRequestURI().getPath().contains("chat");
    int[] prompt = prompt(body, chat);
    int max = body.path(chat ? "max_completion_tokens" : "max_tokens").asInt(0);
    if (max == 0) {
      max = body.path("max_tokens").asInt(16);
    }
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    String id = (chat ? "chatcmpl-" : "cmpl-") + name;
    long created = name.hashCode() & 0xFFFFF;
    if (chat) {
      ObjectNode delta = JSON.createObjectNode().put("role", "assistant").put("content", "");
      write(out, chunk(id, created, true, delta, null));
    }
    int[] context = Arrays.copyOf(prompt, prompt.length + max);
    int n = prompt.length;
    for (int i = 0; i < max; i++) {
      if (i == cutAfter && mode != Mode.OK) {
        die(out, exchange, id, created);
        return;
      }
      int token = next(Arrays.copyOf(context, n));
      context[n++] = token;
      String text = WORDS[indexOf(token)];
      ObjectNode delta = JSON.createObjectNode().put("content", text);
      write(out, chunk(id, created, chat, chat ? delta : text, null));
    }
    write(out, chunk(id, created, chat, chat ? JSON.createObjectNode() : "", "length"));
    if (body.path("stream_options").path("include_usage").asBoolean(false)) {
      ObjectNode usage = JSON.createObjectNode();
      usage.put("id", id).put("created", created).putArray("choices");
      usage
          .putObject("usage")
          .put("prompt_tokens", prompt.length)
          .put("completion_tokens", max)
          .put("total_tokens", prompt.length + max);
      write(out, usage);
    }
    out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
    out.close();
    exchange.close();
  }

  private void die(OutputStream out, HttpExchange exchange, String id, long created)
      throws IOException {
    switch (mode) {
      case STALL -> {
        out.flush();
        try {
          closed.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        exchange.close();
      }
      case TOOL_CALL_CUT -> {
        ObjectNode delta = JSON.createObjectNode();
        ArrayNode calls = delta.putArray("tool_calls");
        calls
            .addObject()
            .put("index", 0)
            .put("id", "call_1")
            .put("type", "function")
            .putObject("function")
            .put("name", "get_weather")
            .put("arguments", "{\"city\": \"Par");
        write(out, chunk(id, created, true, delta, null));
        throw new IOException("engine died inside a tool call");
      }
      case ERROR_EVENT -> {
        out.write(
            ("data: {\"error\":{\"object\":\"error\",\"message\":\"EngineDeadError: engine"
                    + " core died\",\"type\":\"InternalServerError\",\"code\":500}}\n\n"
                    + "data: [DONE]\n\n")
                .getBytes(StandardCharsets.UTF_8));
        out.close();
        exchange.close();
      }
      default -> throw new IOException("engine died");
    }
  }

  private static ObjectNode chunk(
      String id, long created, boolean chat, Object delta, String finish) {
    ObjectNode c = JSON.createObjectNode();
    c.put("id", id)
        .put("object", chat ? "chat.completion.chunk" : "text_completion")
        .put("created", created);
    ObjectNode choice = c.putArray("choices").addObject().put("index", 0);
    if (chat) {
      choice.set("delta", (JsonNode) delta);
    } else {
      choice.put("text", (String) delta);
    }
    choice.put("finish_reason", finish);
    return c;
  }

  private static void write(OutputStream out, JsonNode chunk) throws IOException {
    out.write(("data: " + chunk + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  @Override
  public void close() {
    closed.countDown();
    server.stop(0);
  }
}
