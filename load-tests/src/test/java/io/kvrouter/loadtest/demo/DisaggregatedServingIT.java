package io.kvrouter.loadtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.testing.LoopbackHttp;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A disaggregated demo cluster (two ingresses, prefill engines sim-0 and sim-1, decode engines
 * sim-2 and sim-3, all simulated vLLMs playing the NIXL handshake): what each engine was asked, as
 * its {@code /sim/requests} log says, shows every long request prefilled on a prefill engine and
 * then decoded, with the transfer parameters, on a decode engine; short prompts skip the prefill
 * hop; a decode engine killed mid-run loses no request that had not streamed a byte. The kill runs
 * last (it takes sim-2 away).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DisaggregatedServingIT {

  private static DemoOptions options;
  private static DemoCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    options = DemoOptions.defaults().onFreePorts().withSpeedup(10).withDisaggregation(2, 2);
    cluster = DemoCluster.start(options);
    cluster.awaitReady(Duration.ofSeconds(60));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static ObjectNode completion(long seed, int words, int maxTokens, boolean stream) {
    ObjectNode body = LoopbackHttp.JSON.createObjectNode();
    body.put("model", options.model());
    body.put("prompt", DemoClient.words(seed, words));
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

  /** How many requests engine {@code i} logged with {@code kv_transfer} = {@code part}. */
  private static int logged(int i, String part) throws Exception {
    int n = 0;
    JsonNode log = LoopbackHttp.getJson(cluster.engineUrls().get(i) + "/sim/requests");
    for (JsonNode r : log.path("requests")) {
      if (part.equals(r.path("kv_transfer").asText())) {
        n++;
      }
    }
    return n;
  }

  private static int[] counts(String part) throws Exception {
    int[] c = new int[4];
    for (int i = 0; i < 4; i++) {
      c[i] = logged(i, part);
    }
    return c;
  }

  @Test
  @Order(1)
  void everyLongRequestIsPrefilledOnAPrefillEngineThenDecodedWithTheHandshake() throws Exception {
    int[] prefillsBefore = counts("prefill");
    int[] decodesBefore = counts("decode");
    int[] plainBefore = counts("none");
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
    int[] prefills = counts("prefill");
    int[] decodes = counts("decode");
    int[] plain = counts("none");
    assertThat(prefills[0] + prefills[1] - prefillsBefore[0] - prefillsBefore[1])
        .as("one prefill hop per request, on the prefill engines")
        .isEqualTo(n);
    assertThat(decodes[2] + decodes[3] - decodesBefore[2] - decodesBefore[3])
        .as("one decode with transfer parameters per request, on the decode engines")
        .isEqualTo(n);
    assertThat(prefills[2] + prefills[3] + decodes[0] + decodes[1])
        .as("engines play only their role")
        .isZero();
    for (int i = 0; i < 4; i++) {
      assertThat(plain[i] - plainBefore[i]).as("no request skipped the handshake").isZero();
    }
  }

  @Test
  @Order(2)
  void shortPromptsSkipThePrefillHop() throws Exception {
    int[] prefillsBefore = counts("prefill");
    int[] plainBefore = counts("none");
    for (int i = 0; i < 6; i++) {
      HttpResponse<String> r =
          LoopbackHttp.CLIENT.send(
              post(cluster.ingressUrls().get(i % 2), completion(500 + i, 20, 4, false)),
              HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
    int[] prefills = counts("prefill");
    int[] plain = counts("none");
    assertThat(prefills[0] + prefills[1]).isEqualTo(prefillsBefore[0] + prefillsBefore[1]);
    assertThat(plain[2] + plain[3] - plainBefore[2] - plainBefore[3])
        .as("prefilled where they decode")
        .isEqualTo(6);
  }

  /** What a streamed request saw: its status, whether text arrived, and how it ended. */
  private record Streamed(int status, int textChunks, boolean errorFrame, boolean done) {}

  private static Streamed stream(String ingress, ObjectNode body) throws Exception {
    HttpResponse<InputStream> r =
        LoopbackHttp.CLIENT.send(post(ingress, body), HttpResponse.BodyHandlers.ofInputStream());
    int text = 0;
    boolean error = false;
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
        } else if (data.contains("\"error\"")) {
          error = true;
        } else if (LoopbackHttp.JSON.readTree(data).path("choices").size() > 0) {
          text++;
        }
      }
    } catch (java.io.IOException cut) {
      error = true;
    }
    return new Streamed(r.statusCode(), text, error, done);
  }

  @Test
  @Order(3)
  void killingADecodeEngineLosesNoRequestThatHadNotStreamedAByte() throws Exception {
    ActorTestKit kit = ActorTestKit.create(cluster.agentNode());
    List<CompletableFuture<Streamed>> pending = new ArrayList<>();
    int n = 16;
    for (int i = 0; i < n; i++) {
      ObjectNode body = completion(900 + i, 700, 200, true);
      String ingress = cluster.ingressUrls().get(i % 2);
      pending.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return stream(ingress, body);
                } catch (Exception e) {
                  throw new java.util.concurrent.CompletionException(e);
                }
              }));
    }
    // Kill decode engine sim-2 once it is serving some of them.
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(60),
            Duration.ofMillis(20),
            () -> {
              assertThat(inFlight(cluster.ingressUrls().get(0), "sim-2")).isPositive();
              return null;
            });
    cluster.fleet().engines().get(2).close();
    int cutMidStream = 0;
    for (CompletableFuture<Streamed> f : pending) {
      Streamed s = f.get();
      assertThat(s.status()).as(s.toString()).isEqualTo(200);
      if (s.errorFrame()) {
        assertThat(s.textChunks())
            .as("a request fails only once it has streamed: %s", s)
            .isPositive();
        cutMidStream++;
      } else {
        assertThat(s.done()).as(s.toString()).isTrue();
        assertThat(s.textChunks()).as(s.toString()).isEqualTo(200);
      }
    }
    assertThat(cutMidStream).as("the kill did cut streams").isLessThan(n);
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(30),
            () -> {
              for (String ingress : cluster.ingressUrls()) {
                for (JsonNode replica : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
                  assertThat(replica.path("in_flight").asInt()).as(replica.toString()).isZero();
                }
              }
              return null;
            });
  }

  private static int inFlight(String ingress, String replica) throws Exception {
    for (JsonNode r : LoopbackHttp.getJson(ingress + "/admin/replicas")) {
      if (replica.equals(r.path("replica").asText())) {
        return r.path("in_flight").asInt();
      }
    }
    return 0;
  }
}
