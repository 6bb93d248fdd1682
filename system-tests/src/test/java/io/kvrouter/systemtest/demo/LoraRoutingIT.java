package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.loadtest.bench.EngineSnapshot;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * LoRA adapters through the whole path, over real HTTP (one ingress, three simulated vLLM engines,
 * the kvrouter policy): an adapter loaded at run time on one engine ({@code POST
 * /v1/load_lora_adapter}) is announced by its agent and listed by the ingress; a request naming it
 * lands on that engine although the others are as idle, its repeat lands there again with its
 * prompt cached (even once another engine has the adapter too), and the same prompt for the base
 * model hits none of the adapter's blocks, in the router's prediction or in the engine.
 */
class LoraRoutingIT {

  private static final String ADAPTER = "sql-lora";

  /** Sends the conversation to {@code model}; returns the engine that served it and its answer. */
  private static Served send(DemoCluster cluster, String model, ArrayNode messages)
      throws Exception {
    String ingress = cluster.ingressUrls().get(0);
    DemoClient.awaitConverged(ingress);
    List<EngineSnapshot> before = DemoClient.engineCounters(cluster);
    double predictedBefore = DemoClient.predictedCachedTokens(ingress);
    HttpResponse<String> r =
        LoopbackHttp.post(
            ingress + "/v1/chat/completions", DemoClient.chat(model, messages, 2).toString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode body = LoopbackHttp.JSON.readTree(r.body());
    return new Served(
        DemoClient.servedBy(before, DemoClient.engineCounters(cluster)),
        body.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt(),
        DemoClient.predictedCachedTokens(ingress) - predictedBefore,
        body.path("model").asText());
  }

  private record Served(int engine, int cached, double predicted, String model) {}

  /** Loads the adapter on engine {@code i}, as an operator would. */
  private static void load(DemoCluster cluster, int i) throws Exception {
    HttpResponse<String> r =
        LoopbackHttp.post(
            cluster.engineUrls().get(i) + "/v1/load_lora_adapter",
            "{\"lora_name\":\"" + ADAPTER + "\",\"lora_path\":\"/adapters/" + ADAPTER + "\"}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  /** Waits until the ingress's replica listing shows the adapter on {@code holders} replicas. */
  private static void awaitHolders(String ingress, int holders) throws Exception {
    Predicate<JsonNode> holds =
        r -> {
          for (JsonNode a : r.path("adapters")) {
            if (a.asText().equals(ADAPTER)) {
              return true;
            }
          }
          return false;
        };
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      int n = 0;
      for (JsonNode r : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
        n += holds.test(r) ? 1 : 0;
      }
      if (n == holders) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "ingress lists the adapter on " + n + " replicas, not " + holders + ", after 30 s");
      }
      Thread.sleep(50); // polling the ingress's replica listing, bounded by the deadline
    }
  }

  @Test
  void aLoraRequest_landsWhereItsAdapterAndPrefixAre_andTheBaseModelNeverHitsItsBlocks()
      throws Exception {
    DemoOptions options = DemoClient.kvrouterCluster(3);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String ingress = cluster.ingressUrls().get(0);

      HttpResponse<String> unknown =
          LoopbackHttp.post(
              ingress + "/v1/chat/completions",
              DemoClient.chat(
                      ADAPTER,
                      LoopbackHttp.JSON.createArrayNode().add(DemoClient.message("user", "hi")),
                      2)
                  .toString());
      assertThat(unknown.statusCode()).as("an adapter loaded nowhere").isEqualTo(404);
      assertThat(LoopbackHttp.JSON.readTree(unknown.body()).at("/error/code").asText())
          .isEqualTo("model_not_found");

      load(cluster, 1);
      awaitHolders(ingress, 1);
      JsonNode listed = LoopbackHttp.getJson(ingress + "/v1/models");
      assertThat(listed.path("data").findValuesAsText("id")).contains(ADAPTER, options.model());
      for (JsonNode m : listed.path("data")) {
        if (m.path("id").asText().equals(ADAPTER)) {
          assertThat(m.path("parent").asText())
              .as("listed as vLLM lists it")
              .isEqualTo(options.model());
        }
      }

      ArrayNode messages = LoopbackHttp.JSON.createArrayNode();
      messages.add(DemoClient.message("system", DemoClient.words(11, 400)));
      messages.add(DemoClient.message("user", DemoClient.words(12, 50)));
      Served first = send(cluster, ADAPTER, messages);
      Served again = send(cluster, ADAPTER, messages);
      load(cluster, 0); // another replica holds the adapter now, idle and without the prefix
      awaitHolders(ingress, 2);
      Served third = send(cluster, ADAPTER, messages);
      Served base = send(cluster, options.model(), messages);
      // The base model's prompt on the engine that holds the adapter's blocks: the routed request
      // itself when it landed there; otherwise asked of that engine directly. (Asking it directly
      // after the routed request landed there would hit the base blocks that request computed.)
      int baseOnHolderCached =
          base.engine() == 1 ? base.cached() : baseOnEngine(cluster, 1, messages);

      System.out.printf(
          "lora: first on engine %d; again on %d (engine %d cached, predicted %.0f); with a second"
              + " holder on %d (engine %d cached); base model on %d (engine %d cached, predicted"
              + " %.0f)%n",
          first.engine(),
          again.engine(),
          again.cached(),
          again.predicted(),
          third.engine(),
          third.cached(),
          base.engine(),
          base.cached(),
          base.predicted());
      assertThat(first.engine())
          .as("no cache anywhere: the engine holding the adapter")
          .isEqualTo(1);
      assertThat(first.model()).as("the engine ran the adapter").isEqualTo(ADAPTER);
      assertThat(again.engine()).isEqualTo(1);
      assertThat(again.cached()).as("the engine's hit on the adapter's blocks").isGreaterThan(300);
      assertThat(again.predicted()).as("predicted on the adapter's blocks").isGreaterThan(300);
      assertThat(third.engine()).as("the prefix wins over an idle holder without it").isEqualTo(1);
      assertThat(third.cached()).isGreaterThan(300);
      assertThat(base.cached()).as("the base model's hit on the adapter's blocks").isZero();
      assertThat(base.predicted()).as("predicted for the base model").isZero();
      assertThat(baseOnHolderCached)
          .as("the base model's hit on the engine that holds the adapter's blocks")
          .isZero();
    }
  }

  /** Cached tokens an engine reports for the base model's chat sent to it directly. */
  private static int baseOnEngine(DemoCluster cluster, int engine, ArrayNode messages)
      throws Exception {
    HttpResponse<String> r =
        LoopbackHttp.post(
            cluster.engineUrls().get(engine) + "/v1/chat/completions",
            DemoClient.chat(cluster.options().model(), messages, 2).toString());
    return LoopbackHttp.JSON
        .readTree(r.body())
        .at("/usage/prompt_tokens_details/cached_tokens")
        .asInt(-1);
  }

  /**
   * With no load penalty, an adapter whose only holder is busy prefilling a long prompt spreads:
   * the next request for it goes to the idle engine, where the ingress loads the adapter first
   * (with the path the holder lists), and that engine serves it as the adapter.
   */
  @Test
  void aHotAdapter_spreadsToAnotherEngine_whichTheIngressLoadsItOn() throws Exception {
    DemoOptions options =
        DemoOptions.defaults()
            .onFreePorts()
            .withCounts(1, 2)
            .withPolicy("kvrouter")
            .withSpeedup(0.02); // a 3,000-token prefill takes seconds: the holder stays queued
    try (DemoCluster cluster =
        DemoCluster.start(
            options,
            com.typesafe.config.ConfigFactory.parseString(
                "kvrouter.ingress.lora.load-penalty-tokens = 0"))) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String ingress = cluster.ingressUrls().get(0);
      load(cluster, 1);
      awaitHolders(ingress, 1);

      ArrayNode longPrompt = LoopbackHttp.JSON.createArrayNode();
      longPrompt.add(DemoClient.message("user", DemoClient.words(21, 2500)));
      java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>> busy =
          LoopbackHttp.CLIENT.sendAsync(
              java.net.http.HttpRequest.newBuilder(
                      java.net.URI.create(ingress + "/v1/chat/completions"))
                  .timeout(Duration.ofSeconds(120))
                  .POST(
                      java.net.http.HttpRequest.BodyPublishers.ofString(
                          DemoClient.chat(ADAPTER, longPrompt, 1).toString()))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.ofString());
      awaitInFlight(ingress, "sim-1");

      ArrayNode shortPrompt = LoopbackHttp.JSON.createArrayNode();
      shortPrompt.add(DemoClient.message("user", DemoClient.words(22, 30)));
      HttpResponse<String> spread =
          LoopbackHttp.post(
              ingress + "/v1/chat/completions",
              DemoClient.chat(ADAPTER, shortPrompt, 1).toString());
      assertThat(spread.statusCode()).as(spread.body()).isEqualTo(200);
      assertThat(LoopbackHttp.JSON.readTree(spread.body()).path("model").asText())
          .isEqualTo(ADAPTER);
      JsonNode models = LoopbackHttp.getJson(cluster.engineUrls().get(0) + "/v1/models");
      assertThat(models.path("data").findValuesAsText("id"))
          .as("the ingress loaded the adapter on the idle engine")
          .contains(ADAPTER);
      assertThat(models.path("data").findValuesAsText("root")).contains("/adapters/" + ADAPTER);
      assertThat(busy.get(120, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
  }

  /** Waits until the ingress's tracker holds a reservation on {@code replica}. */
  private static void awaitInFlight(String ingress, String replica) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      for (JsonNode r : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
        if (r.path("replica").asText().equals(replica) && r.path("in_flight").asInt() > 0) {
          return;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(replica + " has no request in flight after 30 s");
      }
      Thread.sleep(20); // polling the ingress's replica listing, bounded by the deadline
    }
  }
}
