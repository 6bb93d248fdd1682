package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.testing.LoopbackHttp;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A disaggregated cluster (two ingresses, prefill engines sim-0 and sim-1, decode engines sim-2 and
 * {@code doomed-0}, all simulated vLLMs playing the NIXL handshake). The ingresses and three
 * engines run in this JVM ({@link DemoCluster}); the decode replica {@code doomed-0} is a host of
 * its own: a separate process from the fat jar, {@code kvrouter agent --sim 1 --role decode},
 * holding its engine and its agent the way a pod holds vLLM and its agent sidecar.
 *
 * <p>What each engine was asked, as its {@code /sim/requests} log says, shows every long request
 * prefilled on a prefill engine and then decoded, with the transfer parameters, on a decode engine;
 * short prompts skip the prefill hop. Then that host is killed with SIGKILL while requests stream:
 * no request that had not streamed a byte is lost, streams it was serving end with an error event
 * (the ingress's OpenAI error frame, {@code data: {"error":...}}, then {@code [DONE]}; the official
 * SDKs raise it as an error) after the text that came, nothing hangs, and no reservation is left in
 * any ingress's ledger. The kill runs last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DisaggregatedServingIT {

  /** Requests streamed across the kill, and the tokens each asks for. */
  private static final int STREAMS = 16;

  private static final int STREAM_TOKENS = 300;

  /**
   * How long every stream together may take before the test calls it a hang: generous, far beyond
   * the few seconds the streams take on an idle machine (it bounds a hang, not a speed).
   */
  private static final Duration HANG = Duration.ofMinutes(3);

  private static DemoOptions options;
  private static DemoCluster cluster;
  private static Process doomed;
  private static Path doomedLog;
  private static String doomedUrl;
  private static ActorTestKit kit;

  /**
   * The failure detector tolerates pauses of 8 s, as in {@link ChaosIT}: the dev profile's shorter
   * pause made starved nodes of a loaded machine drop out of the cluster (seen here at load 60 on 2
   * cores), which this test must not mistake for the kill. The split brain resolver still downs the
   * killed host.
   */
  private static final String PAUSE_KEY =
      "pekko.cluster.failure-detector.acceptable-heartbeat-pause";

  private static final String PAUSE = "8s";

  /**
   * Streams cut by the kill end with their error event here rather than move to another replica:
   * the test is about the prefill hop, and the simulated engines' output tokens are byte values
   * that the ingress's tokenizer counts differently, so a moved stream would not have the length
   * this test checks ({@code StreamMigrationTest} covers migration).
   */
  private static final String MIGRATION_KEY = "kvrouter.ingress.migration.limit";

  @BeforeAll
  static void start() throws Exception {
    System.setProperty(PAUSE_KEY, PAUSE); // read by every in-process node (NodeSettings)
    System.setProperty(MIGRATION_KEY, "0");
    ConfigFactory.invalidateCaches();
    Path config = Files.createTempFile("kvrouter-doomed-decode", ".conf");
    Files.writeString(config, PAUSE_KEY + " = " + PAUSE + "\n");
    // Speedup 1 (the mocker's H100 profile): a 300-token stream lasts seconds, so the kill finds
    // streams open.
    options = DemoOptions.defaults().onFreePorts().withSpeedup(1).withDisaggregation(2, 1);
    cluster = DemoCluster.start(options);
    cluster.awaitReady(Duration.ofSeconds(120));
    kit = ActorTestKit.create(cluster.agentNode());
    String seed = Cluster.get(cluster.ingressNodes().get(0)).selfMember().address().toString();
    doomedLog = Files.createTempFile("kvrouter-doomed-decode", ".log");
    doomed =
        FatJarNodeIT.startJava(
            doomedLog,
            "agent",
            "--profile",
            "dev",
            "--config",
            config.toString(),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--seed-nodes",
            seed,
            "--sim",
            "1",
            "--role",
            "decode",
            "--replica-id",
            "doomed",
            "--sim-host",
            "127.0.0.1",
            "--sim-http-base",
            "0",
            "--sim-zmq-base",
            "0",
            "--speedup",
            "1");
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(120),
            Duration.ofMillis(300),
            () -> {
              assertThat(doomed.isAlive()).as(log()).isTrue();
              for (String ingress : cluster.ingressUrls()) {
                assertThat(
                        LoopbackHttp.getJson(ingress + "/admin/replicas")
                            .findValuesAsText("replica"))
                    .containsExactlyInAnyOrder("sim-0", "sim-1", "sim-2", "doomed-0");
              }
              return null;
            });
    for (JsonNode replica : replicas()) {
      if (replica.path("replica").asText().equals("doomed-0")) {
        doomedUrl = replica.path("url").asText();
      }
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (doomed != null) {
      doomed.destroyForcibly().waitFor();
    }
    if (cluster != null) {
      cluster.close();
    }
    System.clearProperty(PAUSE_KEY);
    System.clearProperty(MIGRATION_KEY);
    ConfigFactory.invalidateCaches();
  }

  private static String log() {
    return NodeProcesses.tails(List.of(doomedLog), 4000);
  }

  /** Prompt words, deterministic per seed (distinct seeds share no prefix). */
  private static String words(long seed, int count) {
    Random r = new Random(seed);
    StringBuilder out = new StringBuilder("request " + seed + ":");
    for (int i = 0; i < count; i++) {
      out.append(" w").append(r.nextInt(5000));
    }
    return out.toString();
  }

  private static ObjectNode completion(long seed, int words, int maxTokens, boolean stream) {
    ObjectNode body = LoopbackHttp.JSON.createObjectNode();
    body.put("model", options.model());
    body.put("prompt", words(seed, words));
    body.put("max_tokens", maxTokens);
    body.put("stream", stream);
    return body;
  }

  private static HttpRequest post(String ingress, ObjectNode body) {
    return HttpRequest.newBuilder(URI.create(ingress + "/v1/completions"))
        .timeout(Duration.ofSeconds(120))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
        .build();
  }

  /** The replicas an ingress lists, as it lists them (replica, role, url, in_flight, ...). */
  private static JsonNode replicas() throws Exception {
    return LoopbackHttp.getJson(cluster.ingressUrls().get(0) + "/admin/replicas");
  }

  /**
   * Requests logged with {@code kv_transfer} = {@code part} by the engines of {@code role}, summed.
   */
  private static int logged(String role, String part) throws Exception {
    int n = 0;
    for (JsonNode replica : replicas()) {
      if (!role.equals(replica.path("role").asText())) {
        continue;
      }
      JsonNode log = LoopbackHttp.getJson(replica.path("url").asText() + "/sim/requests");
      for (JsonNode r : log.path("requests")) {
        if (part.equals(r.path("kv_transfer").asText())) {
          n++;
        }
      }
    }
    return n;
  }

  @Test
  @Order(1)
  void everyLongRequestIsPrefilledOnAPrefillEngineThenDecodedWithTheHandshake() throws Exception {
    int prefillsBefore = logged("prefill", "prefill");
    int decodesBefore = logged("decode", "decode");
    int plainBefore = logged("decode", "none") + logged("prefill", "none");
    List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
    int n = 12;
    for (int i = 0; i < n; i++) {
      pending.add(
          LoopbackHttp.CLIENT.sendAsync(
              post(cluster.ingressUrls().get(i % 2), completion(100 + i, 700, 8, i % 3 == 0)),
              HttpResponse.BodyHandlers.ofString()));
    }
    for (CompletableFuture<HttpResponse<String>> f : pending) {
      assertThat(f.get().statusCode()).as(f.get().body()).isEqualTo(200);
    }
    assertThat(logged("prefill", "prefill") - prefillsBefore)
        .as("one prefill hop per request, on the prefill engines")
        .isEqualTo(n);
    assertThat(logged("decode", "decode") - decodesBefore)
        .as("one decode with transfer parameters per request, on the decode engines")
        .isEqualTo(n);
    assertThat(logged("prefill", "decode") + logged("decode", "prefill"))
        .as("engines play only their role")
        .isZero();
    assertThat(logged("decode", "none") + logged("prefill", "none"))
        .as("no request skipped the handshake")
        .isEqualTo(plainBefore);
  }

  @Test
  @Order(2)
  void shortPromptsSkipThePrefillHop() throws Exception {
    int prefillsBefore = logged("prefill", "prefill");
    int plainBefore = logged("decode", "none");
    for (int i = 0; i < 6; i++) {
      HttpResponse<String> r =
          LoopbackHttp.CLIENT.send(
              post(cluster.ingressUrls().get(i % 2), completion(500 + i, 20, 4, false)),
              HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
    assertThat(logged("prefill", "prefill")).isEqualTo(prefillsBefore);
    assertThat(logged("decode", "none") - plainBefore)
        .as("prefilled where they decode")
        .isEqualTo(6);
  }

  /**
   * What a streamed request saw: its status, the text chunks that arrived, whether an error event
   * came, whether the connection broke, and whether {@code [DONE]} ended it.
   */
  private record Streamed(
      int status, int textChunks, boolean errorEvent, boolean broken, boolean done) {

    boolean complete() {
      return status == 200 && done && !errorEvent && !broken && textChunks == STREAM_TOKENS;
    }
  }

  private static Streamed stream(String ingress, ObjectNode body) throws Exception {
    HttpResponse<InputStream> r =
        LoopbackHttp.CLIENT.send(post(ingress, body), HttpResponse.BodyHandlers.ofInputStream());
    int text = 0;
    boolean error = false;
    boolean broken = false;
    boolean done = false;
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (!line.startsWith("data: ")) {
          continue;
        }
        String data = line.substring(6);
        if (data.equals("[DONE]")) {
          done = true;
        } else if (LoopbackHttp.JSON.readTree(data).has("error")) {
          error = true;
        } else if (LoopbackHttp.JSON.readTree(data).path("choices").size() > 0) {
          text++;
        }
      }
    } catch (IOException cut) {
      broken = true;
    }
    return new Streamed(r.statusCode(), text, error, broken, done);
  }

  @Test
  @Order(3)
  void killingADecodeHostMidRunLosesNoRequestThatHadNotStreamedAByte() throws Exception {
    double retriesBefore = retries();
    ExecutorService clients = Executors.newFixedThreadPool(2 * STREAMS);
    try {
      List<CompletableFuture<Streamed>> pending = new ArrayList<>();
      for (int i = 0; i < STREAMS; i++) {
        pending.add(streamAsync(clients, i, 900 + i));
      }
      // SIGKILL the decode host once it is decoding some of them (and the ingresses count them).
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(120),
              Duration.ofMillis(20),
              () -> {
                assertThat(doomed.isAlive()).as(log()).isTrue();
                assertThat(inFlight("doomed-0")).isPositive();
                assertThat(LoopbackHttp.metric(doomedUrl, "vllm:num_requests_running"))
                    .isPositive();
                return null;
              });
      doomed.destroyForcibly().waitFor();
      // A second wave, sent after the kill: the ingresses still list doomed-0 until the cluster
      // downs its agent, so some of these meet a refused connection before their first byte.
      for (int i = 0; i < STREAMS; i++) {
        pending.add(streamAsync(clients, i, 2000 + i));
      }
      CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
          .get(HANG.toSeconds(), TimeUnit.SECONDS);
      int cut = 0;
      for (CompletableFuture<Streamed> f : pending) {
        Streamed s = f.get();
        if (s.complete()) {
          continue;
        }
        cut++;
        assertThat(s.status()).as("streams begin 200 even if cut: %s", s).isEqualTo(200);
        assertThat(s.textChunks())
            .as("a request fails only once it has streamed a byte: %s", s)
            .isPositive();
        assertThat(s.errorEvent() || s.broken())
            .as("a cut stream says so (an error event, or a broken connection): %s", s)
            .isTrue();
      }
      double retried = retries() - retriesBefore;
      System.out.printf(
          "DisaggregatedServingIT: %d streams, %d cut mid-stream, %.0f attempts retried%n",
          pending.size(), cut, retried);
      assertThat(cut + retried)
          .as("the kill cut streams or made the ingresses retry (it hit requests)")
          .isPositive();
    } finally {
      clients.shutdownNow();
    }
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(60),
            Duration.ofMillis(200),
            () -> {
              for (String ingress : cluster.ingressUrls()) {
                assertThat(LoopbackHttp.metric(ingress, "kvrouter_open_reservations"))
                    .as("reservations left in %s's ledger", ingress)
                    .isZero();
                for (JsonNode replica : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
                  assertThat(replica.path("in_flight").asInt()).as(replica.toString()).isZero();
                }
              }
              return null;
            });
  }

  private CompletableFuture<Streamed> streamAsync(ExecutorService clients, int i, long seed) {
    ObjectNode body = completion(seed, 700, STREAM_TOKENS, true);
    String ingress = cluster.ingressUrls().get(i % 2);
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return stream(ingress, body);
          } catch (Exception e) {
            throw new CompletionException(e);
          }
        },
        clients);
  }

  /** Retries counted by every ingress (a failed attempt placed again elsewhere). */
  private static double retries() throws Exception {
    double n = 0;
    for (String ingress : cluster.ingressUrls()) {
      n += LoopbackHttp.metric(ingress, "kvrouter_retries_total");
    }
    return n;
  }

  private static int inFlight(String replica) throws Exception {
    int n = 0;
    for (String ingress : cluster.ingressUrls()) {
      for (JsonNode r : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
        if (replica.equals(r.path("replica").asText())) {
          n += r.path("in_flight").asInt();
        }
      }
    }
    return n;
  }
}
