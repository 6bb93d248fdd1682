package io.kvrouter.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.agent.sglang.SglangRankRouting;
import io.kvrouter.agent.sglang.SglangServerInfo;
import io.kvrouter.agent.trtllm.TrtllmIterationStats;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.metrics.PrometheusText;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asynchronous HTTP access to one engine: {@code GET /health}, {@code GET /metrics} (vLLM names;
 * TGI's {@code tgi_cache_*} as fallback for the prefix counters; the process start time that
 * Python's prometheus_client exports by default), API discovery by {@code GET /openapi.json} and
 * the alignment probe's {@code POST /v1/completions}, the engine's LoRA adapters by {@code GET
 * /v1/models}. Non-blocking (java.net.http async); thread-safe.
 *
 * <p>API discovery: vLLM's server is a FastAPI application, which publishes the OpenAPI document of
 * every route it mounted at {@code /openapi.json} (unless started with {@code
 * --disable-fastapi-docs}); the Anthropic routes ({@code /v1/messages}, {@code
 * /v1/messages/count_tokens}) and the Responses routes ({@code /v1/responses}) are mounted only on
 * builds and models that serve them (vllm-project/vllm {@code
 * vllm/entrypoints/openai/api_server.py} {@code build_app}, {@code
 * vllm/entrypoints/generate/api_router.py}). So the document's {@code paths} say which of those
 * APIs the engine speaks.
 *
 * <p>Identity ({@link #identity}): the engine's version from {@code GET /version} (vLLM answers
 * {@code {"version": "0.11.0"}}, vllm-project/vllm {@code vllm/entrypoints/openai/api_server.py}
 * {@code show_version}), and its block size and prefix-caching hash algorithm from the labels of
 * {@code vllm:cache_config_info} on {@code /metrics} (vLLM's {@code PrometheusStatLogger} publishes
 * every {@code CacheConfig} field as a label of that info gauge, among them {@code block_size} and
 * {@code prefix_caching_hash_algo}).
 *
 * <p>A TensorRT-LLM engine ({@code kvrouter.agent.engine.kind = tensorrt-llm}) answers {@code
 * /metrics} with JSON iteration stats, read by {@link TrtllmIterationStats}; that answer waits for
 * the engine's 2 s drain ({@link #TRTLLM_DRAIN_WAIT}), and it is not asked for identity (it has no
 * cache configuration and each call takes the stats it answers).
 */
public final class EngineProbe {

  private static final Logger LOG = LoggerFactory.getLogger(EngineProbe.class);

  /**
   * How long trtllm-serve's {@code /metrics} waits for one more stat before it answers ({@code
   * get_stats_async(2)}, {@code tensorrt_llm/serve/openai_server.py} at {@code 00057725}): added to
   * the probe timeout for that request.
   */
  static final Duration TRTLLM_DRAIN_WAIT = Duration.ofSeconds(2);

  /** vLLM's info gauge whose labels are its cache configuration. */
  static final String CACHE_CONFIG_INFO = "vllm:cache_config_info";

  /** The engine kind whose HTTP API is SGLang's ({@code kvrouter.agent.engine.kind}). */
  public static final String SGLANG = "sglang";

  /** The metric Python's prometheus_client exports for the process (not in multiprocess mode). */
  static final String START_TIME = "process_start_time_seconds";

  /**
   * One /metrics scrape.
   *
   * @param load the load heartbeat
   * @param processStartSeconds the engine process's start time, NaN when /metrics has none
   */
  public record Scrape(ReplicaLoad load, double processStartSeconds) {}

  private final HttpClient client;
  private final String baseUrl;
  private final Duration timeout;
  private final int dpRank;
  private final boolean sglang;
  private final boolean trtllm;

  /**
   * @param baseUrl the engine's base URL
   * @param timeout longest wait for the connection and for each answer
   */
  public EngineProbe(String baseUrl, Duration timeout) {
    this(baseUrl, timeout, -1);
  }

  /**
   * @param dpRank the data-parallel rank the probe's completions go to ({@link
   *     ReplicaInfo#DP_RANK_HEADER}), or -1 for an engine without ranks: a probe served by another
   *     rank stores its blocks on that rank's event stream, where this replica never sees them
   */
  public EngineProbe(String baseUrl, Duration timeout, int dpRank) {
    this(baseUrl, timeout, dpRank, EngineIdentity.VLLM);
  }

  /**
   * @param kind the engine kind ({@code kvrouter.agent.engine.kind}): {@value #SGLANG} speaks
   *     SGLang's HTTP API, {@value EngineSettings#TENSORRT_LLM} trtllm-serve's (JSON load on
   *     /metrics), anything else vLLM's
   */
  public EngineProbe(String baseUrl, Duration timeout, int dpRank, String kind) {
    this.sglang = SGLANG.equals(kind);
    this.trtllm = EngineSettings.TENSORRT_LLM.equals(kind);
    this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
    this.baseUrl = baseUrl;
    this.timeout = timeout;
    this.dpRank = dpRank;
  }

  /** Completes with true on a 2xx from /health, false on anything else (never fails). */
  public CompletionStage<Boolean> healthy() {
    return client
        .sendAsync(get("/health"), HttpResponse.BodyHandlers.discarding())
        .handle((r, e) -> e == null && r.statusCode() / 100 == 2);
  }

  /** Scrapes /metrics; fails when the engine does not answer 200. */
  public CompletionStage<Scrape> scrape(String replicaId, long epoch) {
    return scrape(replicaId, epoch, -1);
  }

  /**
   * Scrapes /metrics for one data-parallel rank: only samples labelled {@code engine="<rank>"} (or
   * with no {@code engine} label) count in its load. vLLM labels each rank's gauges and counters
   * with {@code engine} = its engine index, which is its data-parallel rank (vllm-project/vllm
   * {@code vllm/v1/metrics/loggers.py}, {@code PrometheusStatLogger}); {@code rank} -1 sums every
   * rank. A rank's scrape carries no process start time (NaN): {@code process_start_time_seconds}
   * is the front-end process's, which every rank shares, so an unchanged one cannot vouch that one
   * rank's engine core and its event stream are still the ones the agent heard (a rank gone while
   * the others serve would otherwise keep its blocks for good).
   */
  public CompletionStage<Scrape> scrape(String replicaId, long epoch, int rank) {
    if (trtllm) {
      return scrapeTrtllm(replicaId, epoch);
    }
    return client
        .sendAsync(get("/metrics"), HttpResponse.BodyHandlers.ofString())
        .thenApply(
            r -> {
              if (r.statusCode() != 200) {
                throw new IllegalStateException("/metrics answered " + r.statusCode());
              }
              PrometheusText.Parsed parsed = PrometheusText.parse(r.body());
              return new Scrape(
                  toLoad(replicaId, epoch, sums(parsed, rank), now()),
                  rank >= 0 ? Double.NaN : parsed.sums().getOrDefault(START_TIME, Double.NaN));
            });
  }

  /**
   * Scrapes a TensorRT-LLM engine's JSON {@code /metrics} ({@link TrtllmIterationStats}): its load,
   * with no prefix-cache counters and no process start time (NaN). Fails, after a warning that says
   * why, when the answer is not iteration stats: the load is then unknown and no heartbeat goes out
   * for this tick.
   */
  private CompletionStage<Scrape> scrapeTrtllm(String replicaId, long epoch) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(baseUrl + "/metrics"))
            .timeout(timeout.plus(TRTLLM_DRAIN_WAIT))
            .GET()
            .build();
    return client
        .sendAsync(request, HttpResponse.BodyHandlers.ofString())
        .thenApply(
            r -> {
              if (r.statusCode() != 200) {
                throw new IllegalStateException("/metrics answered " + r.statusCode());
              }
              TrtllmIterationStats stats;
              try {
                stats = TrtllmIterationStats.parse(r.body());
              } catch (IllegalArgumentException malformed) {
                LOG.warn(
                    "replica {}: load unknown, {}: {}", replicaId, baseUrl, malformed.getMessage());
                throw malformed;
              }
              return new Scrape(trtllmLoad(replicaId, epoch, stats, now()), Double.NaN);
            });
  }

  /** A heartbeat from TensorRT-LLM iteration stats (it reports no prefix-cache counters). */
  static ReplicaLoad trtllmLoad(
      String replicaId, long epoch, TrtllmIterationStats stats, long now) {
    return new ReplicaLoad(
        replicaId, epoch, stats.running(), stats.waiting(), stats.kvUsage(), 0L, 0L, now);
  }

  /**
   * Posts a completion request.
   *
   * @param json the request body
   * @param wait longest wait for the whole answer
   * @return the status and body (fails when the engine does not answer)
   */
  public CompletionStage<HttpResponse<String>> complete(String json, Duration wait) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(baseUrl + "/v1/completions"))
            .timeout(wait)
            .header("Content-Type", "application/json")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    sglang ? SglangRankRouting.withRank(json, dpRank) : json));
    if (dpRank >= 0 && !sglang) {
      request.header(ReplicaInfo.DP_RANK_HEADER, Integer.toString(dpRank));
    }
    return client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The APIs beyond OpenAI chat and completions that the router can use, when it asks. */
  static final List<String> KNOWN_APIS =
      List.of(ReplicaInfo.MESSAGES_API, ReplicaInfo.COUNT_TOKENS_API, ReplicaInfo.RESPONSES_API);

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Which of {@link #KNOWN_APIS} the engine serves, from its {@code /openapi.json}. Completes with
   * a list (empty when the engine publishes no document, or one without them) once the engine
   * answered at all, and with empty when it did not answer (ask again later); never fails.
   */
  public CompletionStage<Optional<List<String>>> apis() {
    return listed("/openapi.json", EngineProbe::servedApis);
  }

  /**
   * The LoRA adapters the engine serves, from its {@code GET /v1/models}: vLLM lists each adapter
   * after the base model, with {@code parent} set to the base model's name and {@code root} to the
   * adapter's path (vllm-project/vllm {@code vllm/entrypoints/openai/serving_models.py}, {@code
   * show_available_models}). Completes with the adapters' names once the engine answered at all
   * (none when it answered something other than a model list with adapters), and with empty when it
   * did not answer (ask again later); never fails.
   */
  public CompletionStage<Optional<List<String>>> adapters() {
    return listed("/v1/models", EngineProbe::servedAdapters);
  }

  /**
   * What {@code parse} reads from the engine's {@code GET path}: empty when the engine did not
   * answer, none when it answered anything but 200; never fails.
   */
  private CompletionStage<Optional<List<String>>> listed(
      String path, java.util.function.Function<String, List<String>> parse) {
    return client
        .sendAsync(get(path), HttpResponse.BodyHandlers.ofString())
        .handle(
            (r, e) -> {
              if (e != null) {
                return Optional.<List<String>>empty();
              }
              return Optional.of(r.statusCode() == 200 ? parse.apply(r.body()) : List.of());
            });
  }

  /**
   * Which engine this is: {@code kind} as configured, the version its {@code GET /version} gives,
   * the hash algorithm {@code hashAlgo} as configured or else as its metrics say, and its block
   * size as its metrics say. Whatever the engine does not answer reads as unknown; never fails.
   *
   * @param kind the configured engine kind
   * @param hashAlgo the configured hash algorithm, or blank to learn it from the engine
   */
  public CompletionStage<EngineIdentity> identity(String kind, String hashAlgo) {
    if (SGLANG.equals(kind)) {
      return client
          .sendAsync(get("/get_server_info"), HttpResponse.BodyHandlers.ofString())
          .handle(
              (r, e) ->
                  e == null && r.statusCode() == 200
                      ? SglangServerInfo.parse(r.body())
                      : SglangServerInfo.UNKNOWN)
          .thenApply(
              info ->
                  new EngineIdentity(
                      kind,
                      info.version(),
                      hashAlgo == null || hashAlgo.isBlank()
                          ? SglangServerInfo.HASH_ALGO
                          : hashAlgo,
                      info.pageSize()));
    }
    CompletionStage<String> version =
        client
            .sendAsync(get("/version"), HttpResponse.BodyHandlers.ofString())
            .handle((r, e) -> e == null && r.statusCode() == 200 ? version(r.body()) : null);
    CompletionStage<Map<String, String>> cache =
        trtllm
            ? CompletableFuture.completedFuture(Map.of())
            : client
                .sendAsync(get("/metrics"), HttpResponse.BodyHandlers.ofString())
                .handle(
                    (r, e) ->
                        e == null && r.statusCode() == 200 ? cacheConfig(r.body()) : Map.of());
    return version.thenCombine(
        cache,
        (v, c) ->
            new EngineIdentity(
                kind,
                v,
                hashAlgo == null || hashAlgo.isBlank()
                    ? c.get("prefix_caching_hash_algo")
                    : hashAlgo,
                intOrZero(c.get("block_size"))));
  }

  /** The {@code version} of a {@code /version} answer, or null when it has none. */
  static String version(String body) {
    JsonNode v = field(body, "version");
    return v.isValueNode() && !v.asText().isBlank() ? v.asText() : null;
  }

  /** The labels of {@code vllm:cache_config_info} in a {@code /metrics} text; none when absent. */
  static Map<String, String> cacheConfig(String metrics) {
    for (PrometheusText.Sample s : PrometheusText.parse(metrics).samples()) {
      if (s.name().equals(CACHE_CONFIG_INFO)) {
        return s.labels();
      }
    }
    return Map.of();
  }

  private static int intOrZero(String s) {
    try {
      return s == null ? 0 : Integer.parseInt(s.trim());
    } catch (NumberFormatException notANumber) {
      return 0;
    }
  }

  /**
   * The ids of a {@code /v1/models} list's entries that have a {@code parent} (the adapters), in
   * the engine's order; none when the body is not a model list.
   */
  static List<String> servedAdapters(String modelList) {
    JsonNode data = field(modelList, "data");
    List<String> adapters = new ArrayList<>();
    for (JsonNode m : data) {
      JsonNode parent = m.get("parent");
      if (parent != null && parent.isTextual() && !parent.asText().isEmpty() && m.has("id")) {
        adapters.add(m.get("id").asText());
      }
    }
    return List.copyOf(adapters);
  }

  /** The known APIs listed in an OpenAPI document's {@code paths}; none when it is not one. */
  static List<String> servedApis(String openApiDocument) {
    JsonNode paths = field(openApiDocument, "paths");
    List<String> served = new ArrayList<>();
    for (String api : KNOWN_APIS) {
      if (paths.has(api)) {
        served.add(api);
      }
    }
    return List.copyOf(served);
  }

  /** The top-level {@code name} of a JSON document; a missing node when it is not JSON. */
  private static JsonNode field(String json, String name) {
    try {
      return JSON.readTree(json).path(name);
    } catch (Exception notJson) {
      return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }
  }

  private static long now() {
    return System.currentTimeMillis();
  }

  /** Each metric's sum over the samples of {@code rank} (all samples for -1). */
  static Map<String, Double> sums(PrometheusText.Parsed parsed, int rank) {
    if (rank < 0) {
      return parsed.sums();
    }
    String engine = Integer.toString(rank);
    Map<String, Double> out = new java.util.LinkedHashMap<>();
    for (PrometheusText.Sample s : parsed.samples()) {
      String label = s.labels().get("engine");
      if ((label == null || label.equals(engine)) && !Double.isNaN(s.value())) {
        out.merge(s.name(), s.value(), Double::sum);
      }
    }
    return out;
  }

  /** Maps scraped metrics to a heartbeat (missing metrics read as 0). */
  static ReplicaLoad toLoad(String replicaId, long epoch, Map<String, Double> m, long now) {
    double queries =
        m.getOrDefault("vllm:prefix_cache_queries_total", m.getOrDefault("tgi_cache_total", 0.0));
    double hits =
        m.getOrDefault("vllm:prefix_cache_hits_total", m.getOrDefault("tgi_cache_hit", 0.0));
    return new ReplicaLoad(
        replicaId,
        epoch,
        (int) either(m, "vllm:num_requests_running", "sglang:num_running_reqs"),
        (int) either(m, "vllm:num_requests_waiting", "sglang:num_queue_reqs"),
        either(m, "vllm:kv_cache_usage_perc", "sglang:token_usage"),
        (long) queries,
        (long) hits,
        now);
  }

  /** vLLM's metric, else SGLang's, else 0. */
  private static double either(Map<String, Double> m, String vllm, String sglang) {
    return m.getOrDefault(vllm, m.getOrDefault(sglang, 0.0));
  }

  private HttpRequest get(String path) {
    return HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout).GET().build();
  }
}
