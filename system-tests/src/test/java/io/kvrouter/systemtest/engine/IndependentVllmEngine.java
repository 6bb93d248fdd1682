package io.kvrouter.systemtest.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvrouter.testing.EngineDoubles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A vLLM-compatible engine for tests, written apart from kvrouter's own simulated engine so that
 * the agent is tested against behaviour it did not shape: its own prefix cache and block hash
 * ({@link EngineCache}), vLLM's ZMQ/msgpack event transport written directly ({@link KvWire}), the
 * OpenAI completions endpoint, {@code /health}, and a Prometheus {@code /metrics} with or without
 * {@code process_start_time_seconds} (Python's prometheus_client exports it by default, but not in
 * multiprocess mode).
 *
 * <p>It restarts the way a real vLLM does: {@link #restartSilently} closes its sockets, answers 503
 * or refuses connections for a while, and comes back empty with its sequence from 0, a new hash
 * seed and a new start time, announcing nothing (no AllBlocksCleared). {@link #goAway} is an outage
 * of the same process (its cache, sequence and replay buffer survive).
 *
 * <p>Its tokenizer for text prompts is its own: UTF-8 bytes offset by 3 (ids 3..258); token-id
 * prompts are taken as they are. Completions are served one at a time. Thread-safe.
 */
public final class IndependentVllmEngine implements AutoCloseable {

  /** How the engine looks while it is down. */
  public enum Down {
    /** The HTTP server answers 503 to everything. */
    UNAVAILABLE_503,
    /** Nothing listens: connections are refused. */
    REFUSED
  }

  /**
   * The engine's configuration.
   *
   * @param model served model name
   * @param blockSize tokens per KV block
   * @param capacity KV blocks
   * @param exportStartTime whether /metrics has {@code process_start_time_seconds}
   * @param mapEvents map-form events (vLLM ≥0.26) rather than positional ones
   */
  public record Config(
      String model, int blockSize, int capacity, boolean exportStartTime, boolean mapEvents) {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String HOST = "127.0.0.1";

  private final Config config;
  private final AtomicLong incarnations = new AtomicLong();
  private HttpServer http;
  private int httpPort;
  private KvWire wire;
  private String pubEndpoint;
  private String replayEndpoint;
  private EngineCache cache;
  private double startTime;
  private boolean down;
  private long queries;
  private long hits;

  private IndependentVllmEngine(Config config) {
    this.config = config;
  }

  /** Starts an engine on free loopback ports. */
  public static IndependentVllmEngine start(Config config) throws IOException {
    IndependentVllmEngine e = new IndependentVllmEngine(config);
    synchronized (e) {
      e.newProcess();
      e.wire =
          new KvWire(
              "tcp://" + HOST + ":0", "tcp://" + HOST + ":0", "", config.mapEvents(), 10_000, null);
      e.pubEndpoint = e.wire.pubEndpoint();
      e.replayEndpoint = e.wire.replayEndpoint();
      e.startHttp(0);
    }
    return e;
  }

  public String baseUrl() {
    return "http://" + HOST + ":" + httpPort;
  }

  public String kvEventsEndpoint() {
    return pubEndpoint;
  }

  public String replayEndpoint() {
    return replayEndpoint;
  }

  public Config config() {
    return config;
  }

  /** Processes started so far (1 before any restart). */
  public long incarnation() {
    return incarnations.get();
  }

  /** Each cached block's token prefix: its tokens and all before them. */
  public synchronized List<int[]> cachedPrefixes() {
    return cache.prefixes();
  }

  /** Loses the next {@code n} batches on the live path (they stay in the replay buffer). */
  public synchronized void dropNextLive(int n) {
    wire.dropNextLive(n);
  }

  /** Answers the next {@code n} replay requests {@code late} after they arrive. */
  public synchronized void answerReplaysLate(int n, Duration late) {
    wire.answerLate(n, late.toMillis());
  }

  /** Replay requests this process has received. */
  public synchronized long replayRequests() {
    return wire.replayRequests();
  }

  /**
   * Dies and comes back as a new, empty process after {@code outage}: sockets closed, HTTP down as
   * {@code how}, then sequence from 0, new hash seed, new start time, nothing announced.
   *
   * @return {@link System#nanoTime()} when it serves again
   */
  public long restartSilently(Duration outage, Down how) throws Exception {
    fallDown(how);
    Thread.sleep(outage.toMillis()); // the outage itself: what the scenario is about
    synchronized (this) {
      newProcess();
      return comeBack(null);
    }
  }

  /**
   * The same process becomes unreachable for {@code outage} (sockets closed, HTTP down as {@code
   * how}) and comes back with its cache, sequence, replay buffer and start time.
   *
   * @return {@link System#nanoTime()} when it serves again
   */
  public long goAway(Duration outage, Down how) throws Exception {
    KvWire.State kept = fallDown(how);
    Thread.sleep(outage.toMillis()); // the outage itself: what the scenario is about
    synchronized (this) {
      return comeBack(kept);
    }
  }

  private synchronized KvWire.State fallDown(Down how) {
    down = true;
    wire.close();
    if (how == Down.REFUSED) {
      http.stop(0);
      http = null;
    }
    return wire.state();
  }

  private long comeBack(KvWire.State survived) throws IOException {
    wire = bindAgain(survived);
    if (http == null) {
      startHttp(httpPort);
    }
    down = false;
    return System.nanoTime();
  }

  private void newProcess() {
    incarnations.incrementAndGet();
    cache = new EngineCache(config.blockSize(), config.capacity());
    startTime = System.currentTimeMillis() / 1000.0;
    queries = 0;
    hits = 0;
  }

  private KvWire bindAgain(KvWire.State survived) {
    RuntimeException last = null;
    for (int i = 0; i < 100; i++) {
      try {
        return new KvWire(pubEndpoint, replayEndpoint, "", config.mapEvents(), 10_000, survived);
      } catch (RuntimeException e) {
        last = e; // the old listener may take a moment to let the port go
        sleepQuietly(50);
      }
    }
    throw last;
  }

  private void startHttp(int port) throws IOException {
    IOException last = null;
    for (int i = 0; i < 100; i++) {
      try {
        // Before the JVM's first JDK server, so the simulated engines in this JVM get them too.
        io.kvrouter.sim.JdkHttpServerProperties.apply();
        http = HttpServer.create(new InetSocketAddress(HOST, port), 64);
        break;
      } catch (IOException e) {
        last = e;
        sleepQuietly(50);
      }
    }
    if (http == null) {
      throw last;
    }
    http.setExecutor(Executors.newFixedThreadPool(4));
    http.createContext("/", this::handle);
    http.start();
    httpPort = http.getAddress().getPort();
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis); // retry pacing of a bind
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getPath();
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      synchronized (this) {
        if (down) {
          EngineDoubles.respond(ex, 503, "{\"error\":{\"message\":\"engine starting\"}}");
          return;
        }
      }
      switch (path) {
        case "/health" -> EngineDoubles.respond(ex, 200, "");
        case "/metrics" -> EngineDoubles.respond(ex, 200, metrics());
        case "/v1/completions" -> complete(ex, body);
        default -> EngineDoubles.respond(ex, 404, "{\"error\":{\"message\":\"not found\"}}");
      }
    }
  }

  private synchronized String metrics() {
    String l = "{model_name=\"" + config.model() + "\",engine=\"0\"}";
    StringBuilder sb = new StringBuilder();
    sb.append("vllm:num_requests_running").append(l).append(" 0.0\n");
    sb.append("vllm:num_requests_waiting").append(l).append(" 0.0\n");
    sb.append("vllm:kv_cache_usage_perc")
        .append(l)
        .append(' ')
        .append((double) cache.size() / cache.capacity())
        .append('\n');
    sb.append("vllm:prefix_cache_queries_total")
        .append(l)
        .append(' ')
        .append(queries)
        .append(".0\n");
    sb.append("vllm:prefix_cache_hits_total").append(l).append(' ').append(hits).append(".0\n");
    if (config.exportStartTime()) {
      sb.append("# HELP process_start_time_seconds Start time of the process since unix epoch.\n");
      sb.append("# TYPE process_start_time_seconds gauge\n");
      sb.append(String.format(Locale.ROOT, "process_start_time_seconds %.2f%n", startTime));
    }
    return sb.toString();
  }

  private void complete(HttpExchange ex, String body) throws IOException {
    JsonNode req = JSON.readTree(body);
    JsonNode prompt = req.path("prompt");
    int[] tokens = EngineDoubles.tokens(prompt);
    int maxTokens = req.path("max_tokens").asInt(1);
    int cached;
    synchronized (this) {
      int[] all = java.util.Arrays.copyOf(tokens, tokens.length + maxTokens);
      for (int i = tokens.length; i < all.length; i++) {
        all[i] = 3 + 'a' + (all[i - 1] * 7 + i) % 26; // the generated text: letters
      }
      EngineCache.Outcome prefill = cache.cache(tokens);
      EngineCache.Outcome decode = cache.cache(all);
      for (EngineCache.Outcome step : List.of(prefill, decode)) {
        List<KvWire.Event> events = events(step);
        if (!events.isEmpty()) {
          wire.publish(events); // vLLM publishes a batch per step that has events
        }
      }
      cached = prefill.hitTokens();
      queries += tokens.length;
      hits += cached;
    }
    ObjectNode out = JSON.createObjectNode();
    out.put("id", "cmpl-test").put("object", "text_completion").put("model", config.model());
    out.putArray("choices")
        .addObject()
        .put("index", 0)
        .put("text", "x")
        .put("finish_reason", "length");
    ObjectNode usage = out.putObject("usage");
    usage.put("prompt_tokens", tokens.length).put("completion_tokens", maxTokens);
    usage.putObject("prompt_tokens_details").put("cached_tokens", cached);
    EngineDoubles.respond(ex, 200, out.toString());
  }

  private List<KvWire.Event> events(EngineCache.Outcome o) {
    List<KvWire.Event> events = new ArrayList<>();
    if (!o.evicted().isEmpty()) {
      events.add(new KvWire.Removed(o.evicted().stream().mapToLong(Long::longValue).toArray()));
    }
    // One BlockStored per run of new blocks, as vLLM's block pool sends per request and step.
    if (!o.stored().isEmpty()) {
      int bs = config.blockSize();
      long[] hashes = o.stored().stream().mapToLong(EngineCache.Stored::hash).toArray();
      int[] tokens = new int[hashes.length * bs];
      for (int i = 0; i < hashes.length; i++) {
        System.arraycopy(o.stored().get(i).tokens(), 0, tokens, i * bs, bs);
      }
      events.add(new KvWire.Stored(hashes, o.stored().get(0).parentHash(), tokens, bs));
    }
    return events;
  }

  @Override
  public synchronized void close() {
    down = true;
    wire.close();
    if (http != null) {
      http.stop(0);
    }
  }
}
