package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.testing.FreePorts;
import java.net.URI;
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
 * Three nodes as separate processes from the fat jar (two ingresses and an agent with one simulated
 * engine) form one cluster through Pekko Management's cluster bootstrap, as pods do on Kubernetes:
 * no seed nodes are given, each node only knows the contact points (management endpoints) that
 * service discovery returns. Discovery here is Pekko's {@code config} method instead of {@code
 * kubernetes-api}; the bootstrap code path (probe contact points, lowest address forms the cluster,
 * the others join) is the same.
 */
class BootstrapClusterIT {

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

  @Test
  void threeProcessesWithoutSeedNodes_findEachOtherThroughBootstrap_andRouteARequest()
      throws Exception {
    int[] management = {FreePorts.one(), FreePorts.one(), FreePorts.one()};
    int http1 = FreePorts.one();
    int http2 = FreePorts.one();
    String ingress1 = "http://127.0.0.1:" + http1;
    String ingress2 = "http://127.0.0.1:" + http2;

    start(
        "ingress-1",
        management,
        0,
        "ingress",
        "--http-host",
        "127.0.0.1",
        "--http-port",
        "" + http1);
    start(
        "ingress-2",
        management,
        1,
        "ingress",
        "--http-host",
        "127.0.0.1",
        "--http-port",
        "" + http2);
    start(
        "agent",
        management,
        2,
        "agent",
        "--sim",
        "1",
        "--sim-http-base",
        "0",
        "--sim-zmq-base",
        "0",
        "--speedup",
        "20");

    kit = ActorTestKit.create();
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(120),
            Duration.ofMillis(500),
            () -> {
              for (Process p : processes) {
                assertThat(p.isAlive()).as(logs()).isTrue();
              }
              for (int port : management) {
                JsonNode members =
                    MultiProcessClusterIT.get("http://127.0.0.1:" + port + "/cluster/members");
                assertThat(members.path("members").size()).as(members.toString()).isEqualTo(3);
                for (JsonNode m : members.path("members")) {
                  assertThat(m.path("status").asText()).isEqualTo("Up");
                }
                assertThat(status("http://127.0.0.1:" + port + "/ready"))
                    .as("management /ready of %d", port)
                    .isEqualTo(200);
                assertThat(status("http://127.0.0.1:" + port + "/alive")).isEqualTo(200);
              }
              return null;
            });

    for (int i = 0; i < 4; i++) {
      HttpResponse<String> r = MultiProcessClusterIT.complete(i % 2 == 0 ? ingress1 : ingress2, i);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      assertThat(io.kvrouter.testing.LoopbackHttp.JSON.readTree(r.body()).path("choices").size())
          .isEqualTo(1);
    }
    for (int port : management) {
      // The route contact points probe: each node answers with the cluster it is in.
      JsonNode seeds =
          MultiProcessClusterIT.get("http://127.0.0.1:" + port + "/bootstrap/seed-nodes");
      assertThat(seeds.path("seedNodes").size()).as(seeds.toString()).isEqualTo(3);
    }
  }

  private void start(String name, int[] management, int index, String... roleArgs)
      throws Exception {
    Path config = Files.createTempFile("kvrouter-" + name, ".conf");
    StringBuilder endpoints = new StringBuilder();
    for (int port : management) {
      endpoints.append("{ host = \"127.0.0.1\", port = ").append(port).append(" }\n");
    }
    Files.writeString(
        config,
        """
        kvrouter.management { enabled = on, bootstrap = on }
        pekko.management.http { hostname = "127.0.0.1", port = %d }
        pekko.management.cluster.bootstrap {
          contact-point-discovery {
            discovery-method = config
            service-name = kvrouter
            required-contact-point-nr = 3
            stable-margin = 1s
          }
          # Every contact point has its own management port here (one host): probe all of them.
          contact-point.filter-on-fallback-port = false
        }
        pekko.discovery.config.services.kvrouter.endpoints = [
        %s]
        """
            .formatted(management[index], endpoints));
    List<String> args = new ArrayList<>();
    args.add(roleArgs[0]);
    args.addAll(
        List.of(
            "--profile",
            "dev",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--config",
            config.toString()));
    args.addAll(List.of(roleArgs).subList(1, roleArgs.length));
    Path log = Files.createTempFile("kvrouter-" + name, ".log");
    logs.add(log);
    processes.add(FatJarNodeIT.startJava(log, args.toArray(String[]::new)));
  }

  private static int status(String url) throws Exception {
    return MultiProcessClusterIT.HTTP
        .send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private List<String> logsOf() throws Exception {
    List<String> out = new ArrayList<>();
    for (Path l : logs) {
      out.add(Files.readString(l));
    }
    return out;
  }

  private String logs() {
    try {
      StringBuilder out = new StringBuilder();
      for (String text : logsOf()) {
        out.append("====\n")
            .append(text.length() > 4000 ? text.substring(text.length() - 4000) : text);
      }
      return out.toString();
    } catch (Exception e) {
      return e.toString();
    }
  }
}
