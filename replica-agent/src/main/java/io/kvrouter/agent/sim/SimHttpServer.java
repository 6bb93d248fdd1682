package io.kvrouter.agent.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simulated engine's OpenAI-compatible HTTP surface, as vLLM's OpenAI server serves it (vLLM
 * {@code vllm/entrypoints/openai}): {@code POST /v1/completions}, {@code POST /v1/chat/completions}
 * (streaming as SSE chunk by chunk, ending {@code data: [DONE]}, with {@code
 * stream_options.include_usage}), {@code GET /v1/models}, {@code POST /tokenize}, {@code POST
 * /detokenize}, {@code GET /health}, {@code GET /metrics}, {@code POST /reset_prefix_cache}. Usage
 * carries {@code prompt_tokens_details.cached_tokens}. Bad input gets a 4xx with {@code
 * {"error":{"message","type","param","code"}}}.
 *
 * <p>Built on the JDK's {@code com.sun.net.httpserver} (a plain OutputStream per response makes SSE
 * flushing trivial); one pooled thread per open request waits on the engine's tokens.
 */
public final class SimHttpServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(SimHttpServer.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long REQUEST_TIMEOUT_SECONDS = 600;

  private final RealTimeEngine engine;
  private final String model;
  private final SimTokenizer tokenizer;
  private final HttpServer server;
  private final ExecutorService pool;
  private final AtomicLong ids = new AtomicLong();
  private final long created = System.currentTimeMillis() / 1000;

  /**
   * Binds (port 0 picks a free one) and starts serving.
   *
   * @param host interface to bind, e.g. 127.0.0.1
   * @param port TCP port, 0 for any
   * @param model the served model name
   * @param engine the engine behind it (started)
   */
  public SimHttpServer(String host, int port, String model, RealTimeEngine engine)
      throws IOException {
    this(host, port, model, engine, SimTokenizer.BYTES);
  }

  /** A server tokenizing requests with {@code tokenizer}. */
  public SimHttpServer(
      String host, int port, String model, RealTimeEngine engine, SimTokenizer tokenizer)
      throws IOException {
    this.engine = engine;
    this.tokenizer = tokenizer;
    this.model = model;
    // Streamed tokens are small writes: without TCP_NODELAY, Nagle's algorithm and the peer's
    // delayed ACKs hold each one back by tens of milliseconds (vLLM's uvicorn sets it too).
    System.setProperty("sun.net.httpserver.nodelay", "true");
    this.server = HttpServer.create(new InetSocketAddress(host, port), 512);
    AtomicInteger n = new AtomicInteger();
    this.pool =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "sim-http-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(pool);
    server.createContext("/", this::handle);
    server.start();
  }

  /** The port actually bound. */
  public int port() {
    return server.getAddress().getPort();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getPath();
      String method = ex.getRequestMethod().toUpperCase(Locale.ROOT);
      try {
        switch (path) {
          case "/v1/completions" -> generate(ex, method, false);
          case "/v1/chat/completions" -> generate(ex, method, true);
          case "/v1/models" -> {
            requireMethod(method, "GET");
            sendJson(ex, 200, models());
          }
          case "/tokenize" -> {
            requireMethod(method, "POST");
            tokenize(ex);
          }
          case "/detokenize" -> {
            requireMethod(method, "POST");
            detokenize(ex);
          }
          case "/health" -> {
            requireMethod(method, "GET");
            send(ex, 200, "text/plain", new byte[0]);
          }
          case "/metrics" -> {
            requireMethod(method, "GET");
            send(
                ex,
                200,
                "text/plain; version=0.0.4",
                PrometheusText.render(model, engine.stats()).getBytes(StandardCharsets.UTF_8));
          }
          case "/reset_prefix_cache" -> {
            requireMethod(method, "POST");
            boolean ok = engine.query(c -> c.resetPrefixCache(0)).get(10, TimeUnit.SECONDS);
            if (!ok) {
              throw new ApiError(409, "ConflictError", "requests are running", null);
            }
            send(ex, 200, "text/plain", new byte[0]);
          }
          default -> throw new ApiError(404, "NotFoundError", "no route " + path, null);
        }
      } catch (ApiError e) {
        sendError(ex, e);
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        sendError(ex, ApiError.badRequest("invalid JSON: " + e.getOriginalMessage(), null));
      } catch (IOException e) {
        log.debug("client went away: {}", e.toString());
      } catch (Exception e) {
        log.warn("internal error on {}", path, e);
        sendError(ex, new ApiError(500, "InternalServerError", e.toString(), null));
      }
    }
  }

  private static void requireMethod(String method, String expected) {
    if (!method.equals(expected)) {
      throw new ApiError(405, "MethodNotAllowed", "use " + expected, null);
    }
  }

  private JsonNode readBody(HttpExchange ex) throws IOException {
    try (InputStream in = ex.getRequestBody()) {
      byte[] bytes = in.readAllBytes();
      if (bytes.length == 0) {
        throw ApiError.badRequest("empty request body", null);
      }
      JsonNode node = JSON.readTree(bytes);
      if (node == null || !node.isObject()) {
        throw ApiError.badRequest("the body must be a JSON object", null);
      }
      return node;
    }
  }

  private void checkModel(String requested) {
    if (requested != null && !requested.equals(model)) {
      throw new ApiError(
          404, "NotFoundError", "The model `" + requested + "` does not exist.", "model");
    }
  }

  private void generate(HttpExchange ex, String method, boolean chat) throws Exception {
    requireMethod(method, "POST");
    JsonNode body = readBody(ex);
    GenerationRequest g =
        chat
            ? GenerationRequest.chat(body, tokenizer)
            : GenerationRequest.completion(body, tokenizer);
    checkModel(g.model());
    String id =
        (chat ? "chatcmpl-" : "cmpl-") + Long.toHexString(created) + "-" + ids.incrementAndGet();
    LinkedBlockingQueue<Object> q = new LinkedBlockingQueue<>();
    engine.submit(
        new SimRequest(id, g.prompt(), g.maxTokens(), null, g.cacheSalt()),
        new RealTimeEngine.RequestListener() {
          @Override
          public void onToken(Emission e) {
            q.add(e);
          }

          @Override
          public void onError(String message) {
            q.add(message);
          }
        });
    Object first = q.poll(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    if (first instanceof String msg || first == null) {
      engine.abort(id);
      throw ApiError.badRequest(first == null ? "timed out" : (String) first, "prompt");
    }
    Responses r = new Responses(id, model, created, chat);
    if (!g.stream()) {
      int[] out = new int[g.maxTokens()];
      Emission e = (Emission) first;
      out[0] = e.tokenId();
      int n = 1;
      while (!e.finished()) {
        Object next = q.poll(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (!(next instanceof Emission em)) {
          engine.abort(id);
          throw new ApiError(500, "InternalServerError", "engine failed: " + next, null);
        }
        e = em;
        out[n++] = e.tokenId();
      }
      sendJson(ex, 200, r.full(tokenizer.decode(java.util.Arrays.copyOf(out, n)), e));
      return;
    }
    ex.getResponseHeaders().set("Content-Type", "text/event-stream");
    ex.getResponseHeaders().set("Cache-Control", "no-cache");
    ex.sendResponseHeaders(200, 0);
    OutputStream os = ex.getResponseBody();
    try {
      if (chat) {
        sse(os, r.roleChunk());
      }
      Object item = first;
      while (true) {
        if (!(item instanceof Emission e)) {
          ObjectNode err = JSON.createObjectNode();
          err.set(
              "error",
              errorBody(new ApiError(500, "InternalServerError", "engine failed: " + item, null)));
          sse(os, err);
          break;
        }
        sse(os, r.tokenChunk(tokenizer.decode(new int[] {e.tokenId()}), e.finished()));
        if (e.finished()) {
          if (g.includeUsage()) {
            sse(os, r.usageChunk(e));
          }
          break;
        }
        item = q.poll(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      }
      os.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
      os.flush();
    } catch (IOException e) {
      engine.abort(id);
      throw e;
    }
  }

  private static void sse(OutputStream os, JsonNode chunk) throws IOException {
    os.write(("data: " + JSON.writeValueAsString(chunk) + "\n\n").getBytes(StandardCharsets.UTF_8));
    os.flush();
  }

  private ObjectNode models() {
    ObjectNode root = JSON.createObjectNode();
    root.put("object", "list");
    ObjectNode m = root.putArray("data").addObject();
    m.put("id", model);
    m.put("object", "model");
    m.put("created", created);
    m.put("owned_by", "vllm");
    m.put("root", model);
    m.putNull("parent");
    m.put("max_model_len", engine.config().numBlocks() * engine.config().blockSize());
    m.putArray("permission");
    return root;
  }

  private void tokenize(HttpExchange ex) throws IOException {
    JsonNode body = readBody(ex);
    if (body.has("model") && !body.get("model").isNull()) {
      checkModel(body.get("model").asText());
    }
    int[] tokens;
    if (body.has("messages")) {
      boolean gen = body.path("add_generation_prompt").asBoolean(true);
      tokens = tokenizer.encodeChat(body, gen);
    } else if (body.has("prompt") && body.get("prompt").isTextual()) {
      tokens = tokenizer.encodePrompt(body.get("prompt").asText());
    } else {
      throw ApiError.badRequest("'prompt' (a string) or 'messages' is required", "prompt");
    }
    ObjectNode out = JSON.createObjectNode();
    out.put("count", tokens.length);
    out.put("max_model_len", engine.config().numBlocks() * engine.config().blockSize());
    ArrayNode arr = out.putArray("tokens");
    for (int t : tokens) {
      arr.add(t);
    }
    if (body.path("return_token_strs").asBoolean(false)) {
      ArrayNode strs = out.putArray("token_strs");
      for (int t : tokens) {
        strs.add(tokenizer.decode(new int[] {t}));
      }
    }
    sendJson(ex, 200, out);
  }

  private void detokenize(HttpExchange ex) throws IOException {
    JsonNode body = readBody(ex);
    JsonNode tokens = body.get("tokens");
    if (tokens == null || !tokens.isArray()) {
      throw ApiError.badRequest("'tokens' must be a list of token ids", "tokens");
    }
    int[] ids = new int[tokens.size()];
    for (int i = 0; i < ids.length; i++) {
      if (!tokens.get(i).isIntegralNumber()) {
        throw ApiError.badRequest("'tokens' must be a list of token ids", "tokens");
      }
      ids[i] = tokens.get(i).asInt();
    }
    ObjectNode out = JSON.createObjectNode();
    out.put("prompt", tokenizer.decode(ids));
    sendJson(ex, 200, out);
  }

  private static ObjectNode errorBody(ApiError e) {
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

  private static void sendError(HttpExchange ex, ApiError e) throws IOException {
    ObjectNode root = JSON.createObjectNode();
    root.set("error", errorBody(e));
    try {
      sendJson(ex, e.status, root);
    } catch (IOException ignored) {
      // headers already sent (a stream broke): nothing more to say
    }
  }

  private static void sendJson(HttpExchange ex, int status, JsonNode body) throws IOException {
    send(ex, status, "application/json", JSON.writeValueAsBytes(body));
  }

  private static void send(HttpExchange ex, int status, String type, byte[] body)
      throws IOException {
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      try (OutputStream os = ex.getResponseBody()) {
        os.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
