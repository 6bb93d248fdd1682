package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.testing.FreePorts;
import io.kvrouter.testing.LoopbackHttp;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * kvrouter as users run it on several machines, here as separate {@code java} processes from the
 * fat jar: two ingress nodes and one agent node with two simulated engines. Traffic goes to both
 * ingresses; one is killed with SIGKILL; the survivor keeps serving and the cluster view converges
 * again.
 */
class MultiProcessClusterIT {

  static final HttpClient HTTP = LoopbackHttp.CLIENT;

  /**
   * Each process on its own loopback address, as separate hosts would run them: a port picked free
   * on 127.0.0.1 can be taken by an unrelated socket before the node binds it; here it can't.
   */
  static final String I1 = "127.0.0.5";

  static final String I2 = "127.0.0.6";
  static final String AGENT = "127.0.0.7";

  private final List<Process> processes = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();
  private ActorTestKit kit;

  @AfterEach
  void stop() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor();
    }
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  private Process start(String name, String... args) throws Exception {
    Path log = Files.createTempFile("kvrouter-" + name, ".log");
    logs.add(log);
    Process p = FatJarNodeIT.startJava(log, args);
    processes.add(p);
    return p;
  }

  private String logs() {
    StringBuilder out = new StringBuilder();
    for (Path l : logs) {
      try {
        String text = Files.readString(l);
        out.append("==== ")
            .append(l)
            .append('\n')
            .append(text.length() > 4000 ? text.substring(text.length() - 4000) : text);
      } catch (Exception e) {
        out.append(e);
      }
    }
    return out.toString();
  }

  static HttpResponse<String> complete(String ingress, int i) throws Exception {
    String body =
        "{\"model\":\"kvrouter-demo\",\"prompt\":\"request "
            + i
            + " of a shared prefix that is long enough"
            + " to fill a couple of blocks of sixteen tokens each, on and on\",\"max_tokens\":4}";
    return LoopbackHttp.post(ingress + "/v1/completions", body);
  }

  static JsonNode get(String url) throws Exception {
    return LoopbackHttp.getJson(url);
  }

  @Test
  void anIngressWhoseHttpPortIsTaken_exitsWithStatus1_namingTheCause() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getByName(I1))) {
      int port = FreePorts.one(I1);
      Process p =
          start(
              "ingress-taken",
              "ingress",
              "--profile",
              "dev",
              "--host",
              I1,
              "--port",
              "" + port,
              "--seed-nodes",
              "pekko://kvrouter@" + I1 + ":" + port,
              "--http-host",
              I1,
              "--http-port",
              "" + taken.getLocalPort());
      assertThat(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS))
          .as("the ingress exits instead of idling without HTTP: %s", logs())
          .isTrue();
      assertThat(p.exitValue()).as(logs()).isEqualTo(1);
      assertThat(logs()).contains("could not bind its HTTP port");
    }
  }

  @Test
  void twoIngressProcessesAndAnAgent_survivorServesAfterSigkill_andTheViewConverges()
      throws Exception {
    int seedPort = FreePorts.one(I1);
    int secondPort = FreePorts.one(I2);
    int agentPort = FreePorts.one(AGENT);
    int http1 = FreePorts.one(I1);
    int http2 = FreePorts.one(I2);
    String seed = "pekko://kvrouter@" + I1 + ":" + seedPort;
    start(
        "ingress-1",
        "ingress",
        "--profile",
        "dev",
        "--host",
        I1,
        "--port",
        "" + seedPort,
        "--seed-nodes",
        seed,
        "--http-host",
        I1,
        "--http-port",
        "" + http1);
    Process second =
        start(
            "ingress-2",
            "ingress",
            "--profile",
            "dev",
            "--host",
            I2,
            "--port",
            "" + secondPort,
            "--seed-nodes",
            seed,
            "--http-host",
            I2,
            "--http-port",
            "" + http2);
    start(
        "agent",
        "agent",
        "--profile",
        "dev",
        "--host",
        AGENT,
        "--port",
        "" + agentPort,
        "--seed-nodes",
        seed,
        "--sim",
        "2",
        "--sim-http-base",
        "0",
        "--sim-zmq-base",
        "0",
        "--speedup",
        "20");
    String survivor = "http://" + I1 + ":" + http1;
    String victim = "http://" + I2 + ":" + http2;

    kit = ActorTestKit.create();
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(90),
            Duration.ofMillis(500),
            () -> {
              for (Process p : processes) {
                assertThat(p.isAlive()).as(logs()).isTrue();
              }
              for (String ingress : List.of(survivor, victim)) {
                assertThat(get(ingress + "/admin/replicas").size()).as(ingress).isEqualTo(2);
                assertThat(
                        HTTP.send(
                                HttpRequest.newBuilder(URI.create(ingress + "/ready")).build(),
                                HttpResponse.BodyHandlers.discarding())
                            .statusCode())
                    .isEqualTo(200);
              }
              return null;
            });

    for (int i = 0; i < 20; i++) {
      HttpResponse<String> r = complete(i % 2 == 0 ? survivor : victim, i);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(30),
            Duration.ofMillis(500),
            () -> {
              JsonNode view = get(survivor + "/admin/consistency");
              assertThat(view.path("trackers").size()).isEqualTo(2);
              assertThat(view.path("converged").asBoolean()).as(view.toPrettyString()).isTrue();
              return null;
            });

    second.destroyForcibly(); // SIGKILL
    assertThat(second.waitFor()).isNotZero();

    for (int i = 20; i < 30; i++) {
      HttpResponse<String> r = complete(survivor, i);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(60),
            Duration.ofMillis(500),
            () -> {
              JsonNode view = get(survivor + "/admin/consistency");
              assertThat(view.path("trackers").size())
                  .as("the killed tracker left the view")
                  .isEqualTo(1);
              assertThat(view.path("converged").asBoolean()).as(view.toPrettyString()).isTrue();
              return null;
            });
    HttpResponse<String> after = complete(survivor, 99);
    assertThat(after.statusCode()).isEqualTo(200);
  }
}
