package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.bench.BenchRequest;
import io.kvrouter.loadtest.bench.BenchRequestSource;
import io.kvrouter.testing.FreePorts;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;

/**
 * kvrouter nodes as separate processes from the fat jar, each on its own loopback address the way
 * separate hosts would be (127.0.0.2, .3, ...: Linux routes all of 127/8 to the loopback
 * interface). The agent seeds the cluster; ingresses join it. Closing kills what is left.
 */
final class NodeProcesses implements AutoCloseable {

  /** A started ingress: its process, host and HTTP port. */
  /** An ingress process: its HTTP port and its cluster (Pekko remoting) port. */
  record Ingress(Process process, String host, int httpPort, int pekkoPort) {
    String url() {
      return "http://" + host + ":" + httpPort;
    }
  }

  private final List<Process> processes = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();
  private final Path config;
  private String seed;
  final ActorTestKit kit = ActorTestKit.create();

  /**
   * @param extraConfig HOCON given to every node with {@code --config}
   */
  NodeProcesses(String extraConfig) throws Exception {
    config = Files.createTempFile("kvrouter-nodes", ".conf");
    Files.writeString(config, extraConfig);
  }

  /** Starts the agent, seed of the cluster, with {@code engines} simulated engines on its host. */
  Process agent(String host, int engines, double speedup) throws Exception {
    int port = FreePorts.one(host);
    seed = "pekko://kvrouter@" + host + ":" + port;
    return start(
        "agent",
        "agent",
        "--profile",
        "dev",
        "--config",
        config.toString(),
        "--host",
        host,
        "--port",
        "" + port,
        "--seed-nodes",
        seed,
        "--sim",
        "" + engines,
        "--sim-host",
        host,
        "--sim-http-base",
        "0",
        "--sim-zmq-base",
        "0",
        "--speedup",
        "" + speedup);
  }

  /** Starts an ingress on {@code host}, HTTP on {@code httpPort} (0: a free one). */
  Ingress ingress(String host, int httpPort) throws Exception {
    return ingress(host, httpPort, 0);
  }

  /**
   * Starts an ingress on {@code host}, HTTP on {@code httpPort} and the cluster on {@code
   * pekkoPort} (0: a free one each); the same host and Pekko port as an earlier ingress make a new
   * incarnation of that cluster address.
   */
  Ingress ingress(String host, int httpPort, int pekkoPort) throws Exception {
    int http = httpPort == 0 ? FreePorts.one(host) : httpPort;
    int pekko = pekkoPort == 0 ? FreePorts.one(host) : pekkoPort;
    Process p =
        start(
            "ingress-" + host,
            "ingress",
            "--profile",
            "dev",
            "--config",
            config.toString(),
            "--host",
            host,
            "--port",
            "" + pekko,
            "--seed-nodes",
            seed,
            "--http-host",
            host,
            "--http-port",
            "" + http);
    return new Ingress(p, host, http, pekko);
  }

  /** Waits until the ingress answers {@code /ready} with 200 and knows {@code replicas}. */
  void awaitReady(Ingress ingress, int replicas) {
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(120),
            Duration.ofMillis(300),
            () -> {
              for (Process p : processes) {
                if (p == ingress.process()) {
                  assertThat(p.isAlive()).as(logs()).isTrue();
                }
              }
              assertThat(status(ingress.url() + "/ready")).isEqualTo(200);
              assertThat(MultiProcessClusterIT.get(ingress.url() + "/admin/replicas").size())
                  .isEqualTo(replicas);
              return null;
            });
  }

  /** The status of a GET, or -1 when nothing answers. */
  static int status(String url) {
    try {
      return MultiProcessClusterIT.HTTP
          .send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  private Process start(String name, String... args) throws Exception {
    Path log = Files.createTempFile("kvrouter-" + name, ".log");
    logs.add(log);
    Process p = FatJarNodeIT.startJava(log, args);
    processes.add(p);
    return p;
  }

  /** The tail of every node's log, for assertion messages. */
  String logs() {
    return tails(logs, 3000);
  }

  /** The last {@code chars} characters of each log, each under its name. */
  static String tails(List<Path> logs, int chars) {
    StringBuilder out = new StringBuilder();
    for (Path l : logs) {
      try {
        String text = Files.readString(l);
        out.append("==== ")
            .append(l)
            .append('\n')
            .append(text.length() > chars ? text.substring(text.length() - chars) : text);
      } catch (Exception e) {
        out.append(e);
      }
    }
    return out.toString();
  }

  /** {@code workload} until {@code enough} is set. */
  static BenchRequestSource until(BenchRequestSource workload, AtomicBoolean enough) {
    return new BenchRequestSource() {
      @Override
      public String name() {
        return workload.name();
      }

      @Override
      public boolean hasNext() {
        return !enough.get() && workload.hasNext();
      }

      @Override
      public BenchRequest next() {
        return workload.next();
      }
    };
  }

  @Override
  public void close() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly().waitFor();
    }
    kit.shutdownTestKit();
  }
}
