package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simulated engine's HTTP surface, as vLLM serves it (vllm-project/vllm {@code
 * vllm/entrypoints/openai/api_server.py} and the routers it mounts): {@code POST /v1/completions},
 * {@code POST /v1/chat/completions} (streaming as SSE chunk by chunk, ending {@code data: [DONE]},
 * with {@code stream_options.include_usage}), and where {@link SimApis} says so {@code POST
 * /v1/messages}, {@code POST /v1/messages/count_tokens} and {@code POST /v1/responses} ({@link
 * SimInference}); {@code GET /v1/models}, {@code POST /tokenize}, {@code POST /detokenize}, {@code
 * GET /health}, {@code GET /version}, {@code GET /metrics}, {@code POST /reset_prefix_cache}, where
 * {@link SimApis} says so (vLLM's {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING}) {@code POST
 * /v1/load_lora_adapter} and {@code POST /v1/unload_lora_adapter} ({@link SimAdapters}), and {@code
 * GET /openapi.json} listing the routes (FastAPI publishes it for vLLM). Usage carries the cached
 * prompt tokens. Bad input gets a 4xx with {@code {"error":{"message","type","param","code"}}}
 * (Anthropic's {@code {"type":"error","error":{...}}} on the Anthropic routes). As a test double it
 * also serves {@code GET /sim/requests}: what its last requests looked like ({@link
 * SimRequestLog}).
 *
 * <p>Built on the JDK's {@code com.sun.net.httpserver} (a plain OutputStream per response makes SSE
 * flushing trivial); one pooled thread per open request waits on the engine's tokens.
 */
public final class SimHttpServer implements AutoCloseable {

  /**
   * What {@code GET /version} answers: the vLLM release whose APIs and map-form KV events the sim
   * follows, marked as simulated (vLLM answers {@code {"version": VLLM_VERSION}} there).
   */
  public static final String VERSION = "0.26.0+sim";

  private static final Logger log = LoggerFactory.getLogger(SimHttpServer.class);

  static {
    JdkHttpServerProperties.apply();
  }

  private final SimRanks ranks;
  private final RealTimeEngine engine;
  private final String model;
  private final SimTokenizer tokenizer;
  private final SimApis apis;
  private final HttpServer server;
  private final ExecutorService pool;
  private final long created = System.currentTimeMillis() / 1000;
  private final SimRequestLog requests = new SimRequestLog();
  private final SimInference inference;
  private final SimAdapters adapters;

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
    this(host, port, model, engine, SimTokenizer.BYTES, SimApis.vllm());
  }

  /** A server tokenizing requests with {@code tokenizer} and serving {@code apis}. */
  public SimHttpServer(
      String host,
      int port,
      String model,
      RealTimeEngine engine,
      SimTokenizer tokenizer,
      SimApis apis)
      throws IOException {
    this(
        host,
        port,
        model,
        List.of(engine),
        tokenizer,
        apis,
        SimKvTransfer.defaults(),
        Map.of(),
        io.kvrouter.protocol.keys.MediaPrompt.Settings.DEFAULTS);
  }

  /**
   * A server in front of the data-parallel ranks {@code engines} (one for an engine without data
   * parallelism), pulling transferred KV at {@code transfer}'s speed, serving the LoRA adapters
   * {@code loraModules} (name to path, vLLM's {@code --lora-modules}) from the start ({@link
   * SimAdapters}), expanding images as {@code images} says.
   */
  public SimHttpServer(
      String host,
      int port,
      String model,
      List<RealTimeEngine> engines,
      SimTokenizer tokenizer,
      SimApis apis,
      SimKvTransfer transfer,
      Map<String, String> loraModules,
      io.kvrouter.protocol.keys.MediaPrompt.Settings images)
      throws IOException {
    this.ranks = new SimRanks(engines);
    this.adapters = new SimAdapters(model, loraModules);
    this.engine = ranks.first();
    this.tokenizer = tokenizer;
    this.model = model;
    this.apis = apis;
    this.inference =
        new SimInference(
            ranks,
            transfer,
            new SimKvHandshake(host),
            model,
            tokenizer,
            apis,
            requests,
            adapters,
            images);
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
      boolean anthropic = path.startsWith("/v1/messages");
      try {
        route(ex, path, method);
      } catch (SimApiError e) {
        SimHttp.sendError(ex, e, anthropic);
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        SimHttp.sendError(
            ex, SimApiError.badRequest("invalid JSON: " + e.getOriginalMessage(), null), anthropic);
      } catch (IOException e) {
        log.debug("client went away: {}", e.toString());
      } catch (Exception e) {
        log.warn("internal error on {}", path, e);
        SimHttp.sendError(
            ex, new SimApiError(500, "InternalServerError", e.toString(), null), anthropic);
      }
    }
  }

  private void route(HttpExchange ex, String path, String method) throws Exception {
    switch (path) {
      case "/v1/completions" -> post(ex, method, b -> inference.openAi(ex, b, false));
      case "/v1/chat/completions" -> post(ex, method, b -> inference.openAi(ex, b, true));
      case "/v1/messages" -> {
        served(apis.anthropic(), path);
        post(ex, method, b -> inference.messages(ex, b));
      }
      case "/v1/messages/count_tokens" -> {
        served(apis.anthropic(), path);
        post(ex, method, b -> inference.countTokens(ex, b));
      }
      case "/v1/responses" -> {
        served(apis.responses(), path);
        post(ex, method, b -> inference.responses(ex, b));
      }
      case "/v1/load_lora_adapter" -> {
        served(apis.runtimeLora(), path);
        post(ex, method, b -> loadAdapter(ex, b));
      }
      case "/v1/unload_lora_adapter" -> {
        served(apis.runtimeLora(), path);
        post(ex, method, b -> unloadAdapter(ex, b));
      }
      case "/v1/models" -> {
        SimHttp.requireMethod(method, "GET");
        SimHttp.sendJson(ex, 200, models());
      }
      case "/openapi.json" -> {
        SimHttp.requireMethod(method, "GET");
        SimHttp.sendJson(ex, 200, openApi());
      }
      case "/sim/requests" -> {
        SimHttp.requireMethod(method, "GET");
        SimHttp.sendJson(ex, 200, requests.toJson());
      }
      case "/sim/cache" -> {
        // The blocks the engine holds now, so tests in other processes can compare a router's
        // view with it (a test double's window, not a vLLM API).
        SimHttp.requireMethod(method, "GET");
        long[] held = engine.query(SimEngineCore::cachedBlockHashes).get(10, TimeUnit.SECONDS);
        ObjectNode cache = JsonNodeFactory.instance.objectNode().put("blocks", held.length);
        SimHttp.sendJson(ex, 200, cache);
      }
      case "/tokenize" -> post(ex, method, b -> tokenize(ex, b));
      case "/detokenize" -> post(ex, method, b -> detokenize(ex, b));
      case "/version" -> {
        SimHttp.requireMethod(method, "GET");
        SimHttp.sendJson(ex, 200, SimHttp.JSON.createObjectNode().put("version", VERSION));
      }
      case "/health" -> {
        SimHttp.requireMethod(method, "GET");
        SimHttp.send(ex, 200, "text/plain", new byte[0]);
      }
      case "/metrics" -> {
        SimHttp.requireMethod(method, "GET");
        SimHttp.send(
            ex,
            200,
            "text/plain; version=0.0.4",
            SimMetricsRenderer.render(model, ranks.all()).getBytes(StandardCharsets.UTF_8));
      }
      case "/reset_prefix_cache" -> {
        SimHttp.requireMethod(method, "POST");
        boolean ok = true;
        for (RealTimeEngine rank : ranks.all()) {
          ok &= rank.query(c -> c.resetPrefixCache(0)).get(10, TimeUnit.SECONDS);
        }
        if (!ok) {
          throw new SimApiError(409, "ConflictError", "requests are running", null);
        }
        SimHttp.send(ex, 200, "text/plain", new byte[0]);
      }
      default -> throw new SimApiError(404, "NotFoundError", "no route " + path, null);
    }
  }

  /** A handler of a JSON body. */
  private interface BodyHandler {
    void handle(JsonNode body) throws Exception;
  }

  private static void post(HttpExchange ex, String method, BodyHandler handler) throws Exception {
    SimHttp.requireMethod(method, "POST");
    handler.handle(SimHttp.readBody(ex));
  }

  /** A route this engine does not mount is a 404, as on a vLLM without it. */
  private static void served(boolean on, String path) {
    if (!on) {
      throw new SimApiError(404, "NotFoundError", "no route " + path, null);
    }
  }

  /** The OpenAPI document's {@code paths}, as FastAPI publishes it for vLLM (no schemas). */
  private ObjectNode openApi() {
    ObjectNode root = SimHttp.JSON.createObjectNode();
    root.put("openapi", "3.1.0");
    root.putObject("info").put("title", "FastAPI").put("version", "0.1.0");
    ObjectNode paths = root.putObject("paths");
    for (String p : apis.paths()) {
      paths.putObject(p).putObject("post").put("summary", p);
    }
    for (String p : new String[] {"/v1/models", "/health", "/version", "/metrics"}) {
      paths.putObject(p).putObject("get").put("summary", p);
    }
    for (String p : new String[] {"/tokenize", "/detokenize"}) {
      paths.putObject(p).putObject("post").put("summary", p);
    }
    return root;
  }

  private ObjectNode models() {
    ObjectNode root = SimHttp.JSON.createObjectNode();
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
    // vLLM lists each adapter after the base model: root is the path it was loaded from, parent
    // the base model (serving_models.py, show_available_models).
    for (SimAdapters.Adapter a : adapters.list()) {
      ObjectNode card = root.withArray("data").addObject();
      card.put("id", a.name());
      card.put("object", "model");
      card.put("created", created);
      card.put("owned_by", "vllm");
      card.put("root", a.path());
      card.put("parent", model);
      card.putNull("max_model_len");
      card.putArray("permission");
    }
    return root;
  }

  /**
   * {@code POST /v1/load_lora_adapter} with {@code {"lora_name","lora_path"}}: 200 and vLLM's plain
   * text "Success: LoRA adapter 'x' added successfully." (vllm-project/vllm {@code
   * vllm/entrypoints/openai/api_server.py} answers the handler's string as the body), or {@link
   * SimAdapters#load}'s error.
   */
  private void loadAdapter(HttpExchange ex, JsonNode body) throws IOException {
    String name = text(body, "lora_name");
    adapters.load(name, text(body, "lora_path"));
    log.info("Loaded new LoRA adapter: name '{}', path '{}'", name, text(body, "lora_path"));
    SimHttp.send(
        ex,
        200,
        "text/plain; charset=utf-8",
        ("Success: LoRA adapter '" + name + "' added successfully.")
            .getBytes(StandardCharsets.UTF_8));
  }

  /** {@code POST /v1/unload_lora_adapter} with {@code {"lora_name"}}, as vLLM answers it. */
  private void unloadAdapter(HttpExchange ex, JsonNode body) throws IOException {
    String name = text(body, "lora_name");
    adapters.unload(name);
    SimHttp.send(
        ex,
        200,
        "text/plain; charset=utf-8",
        ("Success: LoRA adapter '" + name + "' removed successfully.")
            .getBytes(StandardCharsets.UTF_8));
  }

  private static String text(JsonNode body, String field) {
    JsonNode v = body.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private void tokenize(HttpExchange ex, JsonNode body) throws IOException {
    if (body.has("model") && !body.get("model").isNull()) {
      inference.checkModel(body.get("model").asText());
    }
    int[] tokens;
    if (body.has("messages")) {
      boolean gen = body.path("add_generation_prompt").asBoolean(true);
      tokens = tokenizer.encodeChat(VllmChat.normalize(body), gen);
    } else if (body.has("prompt") && body.get("prompt").isTextual()) {
      tokens = tokenizer.encodePrompt(body.get("prompt").asText());
    } else {
      throw SimApiError.badRequest("'prompt' (a string) or 'messages' is required", "prompt");
    }
    ObjectNode out = SimHttp.JSON.createObjectNode();
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
    SimHttp.sendJson(ex, 200, out);
  }

  private void detokenize(HttpExchange ex, JsonNode body) throws IOException {
    JsonNode tokens = body.get("tokens");
    if (tokens == null || !tokens.isArray()) {
      throw SimApiError.badRequest("'tokens' must be a list of token ids", "tokens");
    }
    int[] ids = new int[tokens.size()];
    for (int i = 0; i < ids.length; i++) {
      if (!tokens.get(i).isIntegralNumber()) {
        throw SimApiError.badRequest("'tokens' must be a list of token ids", "tokens");
      }
      ids[i] = tokens.get(i).asInt();
    }
    ObjectNode out = SimHttp.JSON.createObjectNode();
    out.put("prompt", tokenizer.decode(ids));
    SimHttp.sendJson(ex, 200, out);
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
