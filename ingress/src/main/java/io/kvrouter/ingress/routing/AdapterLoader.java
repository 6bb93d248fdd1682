package io.kvrouter.ingress.routing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Loads a LoRA adapter on an engine that lacks it, before a request for the adapter is sent there:
 * the adapter's path is read from an engine that has it ({@code GET /v1/models}, whose adapter
 * entries carry the path as {@code root}: vllm-project/vllm {@code
 * vllm/entrypoints/openai/serving_models.py}, {@code show_available_models}), then the engine is
 * asked to load it ({@code POST /v1/load_lora_adapter} with {@code lora_name} and {@code
 * lora_path}, which vLLM serves when {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING} is set). vLLM answers
 * 200 when it loaded it and 400 "The lora adapter 'x' has already been loaded." when it had it:
 * both mean the adapter is there.
 *
 * <p>The engine's agent announces the adapter within its refresh interval; until then the loader
 * remembers where it loaded what ({@link #loadedOn}) for {@code remember}, so placement counts the
 * engine as a holder and no request there loads it again. Past that, a request sent to an engine
 * the directory still does not list asks once more and hears that it is already loaded. Loads of
 * one adapter on one engine that overlap share one request. Paths are remembered per adapter name
 * (forgotten when a load with it fails). Thread-safe; never blocks (java.net.http async).
 */
public final class AdapterLoader {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient client;
  private final Duration timeout;
  private final Map<String, String> paths = new ConcurrentHashMap<>();
  private final Map<String, CompletableFuture<Void>> loading = new ConcurrentHashMap<>();

  /** Adapter name to the engines this loader loaded it on, each until when it counts. */
  private final Map<String, Map<String, Long>> loaded = new ConcurrentHashMap<>();

  private final long rememberNanos;

  /**
   * @param timeout longest wait for the connection and for each answer
   */
  public AdapterLoader(Duration timeout) {
    this(timeout, Duration.ZERO);
  }

  /**
   * @param timeout longest wait for the connection and for each answer
   * @param remember how long an engine this loader loaded an adapter on counts as holding it
   */
  public AdapterLoader(Duration timeout, Duration remember) {
    this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
    this.timeout = timeout;
    this.rememberNanos = remember.toNanos();
  }

  /** The base URLs of the engines this loader loaded {@code adapter} on within its memory. */
  public Set<String> loadedOn(String adapter) {
    Map<String, Long> engines = loaded.get(adapter);
    if (engines == null) {
      return Set.of();
    }
    long now = System.nanoTime();
    engines.values().removeIf(until -> until - now <= 0);
    return Set.copyOf(engines.keySet());
  }

  /**
   * Loads {@code adapter} on the engine at {@code engineUrl}, with the path one of {@code
   * holderUrls} (engines that have it, tried in order) lists for it. Completes when the engine has
   * it; fails when no holder lists it or the engine refuses to load it.
   */
  public CompletionStage<Void> load(String engineUrl, String adapter, List<String> holderUrls) {
    String key = engineUrl + " " + adapter;
    CompletableFuture<Void> fresh = new CompletableFuture<>();
    CompletableFuture<Void> running = loading.putIfAbsent(key, fresh);
    if (running != null) {
      return running;
    }
    path(adapter, holderUrls, 0)
        .thenCompose(path -> post(engineUrl, adapter, path))
        .whenComplete(
            (done, error) -> {
              loading.remove(key, fresh);
              if (error != null) {
                paths.remove(adapter);
                fresh.completeExceptionally(error);
              } else {
                if (rememberNanos > 0) {
                  loaded
                      .computeIfAbsent(adapter, a -> new ConcurrentHashMap<>())
                      .put(engineUrl, System.nanoTime() + rememberNanos);
                }
                fresh.complete(null);
              }
            });
    return fresh;
  }

  /** The path of {@code adapter}: remembered, or read from the holders from {@code from} on. */
  private CompletionStage<String> path(String adapter, List<String> holderUrls, int from) {
    String known = paths.get(adapter);
    if (known != null) {
      return CompletableFuture.completedFuture(known);
    }
    if (from >= holderUrls.size()) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("no engine lists the path of LoRA adapter '" + adapter + "'"));
    }
    HttpRequest get =
        HttpRequest.newBuilder(URI.create(holderUrls.get(from) + "/v1/models"))
            .timeout(timeout)
            .GET()
            .build();
    return client
        .sendAsync(get, HttpResponse.BodyHandlers.ofString())
        .handle((r, e) -> e == null && r.statusCode() == 200 ? root(r.body(), adapter) : null)
        .thenCompose(
            root -> {
              if (root == null) {
                return path(adapter, holderUrls, from + 1);
              }
              paths.put(adapter, root);
              return CompletableFuture.completedFuture(root);
            });
  }

  /** The {@code root} of {@code adapter}'s entry in a {@code /v1/models} list, or null. */
  static String root(String modelList, String adapter) {
    try {
      for (JsonNode m : JSON.readTree(modelList).path("data")) {
        if (adapter.equals(m.path("id").asText()) && m.path("root").isTextual()) {
          return m.get("root").asText();
        }
      }
    } catch (Exception notJson) {
      return null;
    }
    return null;
  }

  private CompletionStage<Void> post(String engineUrl, String adapter, String path) {
    String body =
        JSON.createObjectNode().put("lora_name", adapter).put("lora_path", path).toString();
    HttpRequest load =
        HttpRequest.newBuilder(URI.create(engineUrl + "/v1/load_lora_adapter"))
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    return client
        .sendAsync(load, HttpResponse.BodyHandlers.ofString())
        .thenApply(
            r -> {
              boolean there =
                  r.statusCode() == 200
                      || (r.statusCode() == 400 && r.body().contains("has already been loaded"));
              if (r.statusCode() == 404) {
                // vLLM mounts the loading routes only when the variable is set.
                throw new IllegalStateException(
                    engineUrl
                        + " does not load LoRA adapters at run time (404 on"
                        + " /v1/load_lora_adapter): start vLLM with"
                        + " VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, or serve '"
                        + adapter
                        + "' from the start with --lora-modules");
              }
              if (!there) {
                throw new IllegalStateException(
                    engineUrl
                        + " did not load LoRA adapter '"
                        + adapter
                        + "': "
                        + r.statusCode()
                        + " "
                        + r.body());
              }
              return null;
            });
  }
}
