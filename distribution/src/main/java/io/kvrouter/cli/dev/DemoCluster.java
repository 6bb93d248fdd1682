package io.kvrouter.cli.dev;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.AgentGuardian;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.agent.ReplicaSpec;
import io.kvrouter.cli.RouterTokenizers;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.ingress.node.IngressGuardian;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.sim.SimApis;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.sim.SimFleet;
import io.kvrouter.sim.SimKvTransfer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * A whole kvrouter cluster in one JVM: N ingress nodes (each with its tracker and HTTP front) and
 * one agent node serving M simulated vLLM engines over real loopback HTTP and ZMQ. It is what
 * {@code kvrouter demo} runs, and what the end-to-end tests and load runs drive.
 */
public final class DemoCluster implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final DemoOptions options;
  private final List<ActorSystem<Void>> ingressNodes;
  private final ActorSystem<Void> agentNode;
  private final SimFleet fleet;
  private final SimFleet mismatched;
  private final List<String> ingressUrls;
  private final TokenizerRegistry tokenizers;

  private DemoCluster(
      DemoOptions options,
      List<ActorSystem<Void>> ingressNodes,
      ActorSystem<Void> agentNode,
      SimFleet fleet,
      SimFleet mismatched,
      List<String> ingressUrls,
      TokenizerRegistry tokenizers) {
    this.options = options;
    this.ingressNodes = ingressNodes;
    this.agentNode = agentNode;
    this.fleet = fleet;
    this.mismatched = mismatched;
    this.ingressUrls = ingressUrls;
    this.tokenizers = tokenizers;
  }

  /**
   * What the demo's engines serve: what a current vLLM serves, with its Responses store switched on
   * ({@code VLLM_ENABLE_RESPONSES_API_STORE=1}), so {@code previous_response_id} conversations
   * work, and runtime adapter loading allowed ({@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=True}), so
   * adapters can be loaded on a demo engine.
   */
  public static final SimApis DEMO_APIS =
      SimApis.vllm().withResponsesStore(true).withRuntimeLora(true);

  /**
   * Starts every node and engine ({@link #DEMO_APIS}); {@link #awaitReady} tells when it routes.
   */
  public static DemoCluster start(DemoOptions o) throws IOException {
    return start(o, DEMO_APIS);
  }

  /** Starts a demo whose decode engines receive prefilled KV at {@code transfer}'s speed. */
  public static DemoCluster start(DemoOptions o, SimApis apis, SimKvTransfer transfer)
      throws IOException {
    return start(o, apis, transfer, ConfigFactory.empty());
  }

  /** Starts a demo whose ingresses take {@code ingressConfig} over their defaults. */
  public static DemoCluster start(DemoOptions o, Config ingressConfig) throws IOException {
    return start(o, DEMO_APIS, SimKvTransfer.defaults(), ingressConfig);
  }

  /** Starts a demo whose engines serve {@code apis} (e.g. {@link SimApis#chatOnly()}). */
  public static DemoCluster start(DemoOptions o, SimApis apis) throws IOException {
    return start(o, apis, SimKvTransfer.defaults(), ConfigFactory.empty());
  }

  /**
   * Nodes started here leave when their owner closes them ({@link #close}), not from JVM shutdown
   * hooks. Several nodes share this JVM: from the hooks they would all leave at once, each node's
   * remoting hook closing its connections as soon as that node is done, and the last to leave, with
   * no one left to confirm its exit, would wait out its cluster-exiting timeout (10 s). Both Pekko
   * hooks are off ({@code pekko.jvm-shutdown-hooks} covers remoting's).
   */
  static final Config SHUTDOWN_BY_OWNER =
      ConfigFactory.parseMap(
          Map.of(
              "pekko.jvm-shutdown-hooks",
              "off",
              "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook",
              "off"));

  private static DemoCluster start(
      DemoOptions o, SimApis apis, SimKvTransfer transfer, Config ingressConfig)
      throws IOException {
    TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
    SimEngineSettings template =
        SimEngineSettings.loopback()
            .withModel(o.model())
            .withApis(apis)
            .withTokenizer(ModelSimTokenizer.forModel(tokenizers, o.model()))
            .withEngine(o.engine())
            .withDataParallel(0, o.dpSize())
            .withTransfer(transfer);
    int regular = o.mismatchedBlockSize() > 0 ? o.engines() - 1 : o.engines();
    List<String> roles = new ArrayList<>();
    for (int i = 0; i < regular; i++) {
      roles.add(o.role(i));
    }
    SimFleet fleet = SimFleet.start(roles, "sim", o.enginePort(), o.kvEventsPort(), template);
    SimFleet mismatched = null;
    List<ReplicaSpec> specs = new ArrayList<>(SimAgentCommand.specs(fleet));
    if (o.mismatchedBlockSize() > 0) {
      try {
        mismatched = startMismatched(o, regular, template);
      } catch (IOException | RuntimeException e) {
        fleet.close();
        throw e;
      }
      ReplicaSpec s = SimAgentCommand.spec(mismatched.replicas().get(0));
      specs.add(
          new ReplicaSpec(
              s.replicaId(),
              s.dpRank(),
              s.model(),
              s.baseUrl(),
              template.engine().blockSize(),
              s.kvEventsEndpoint(),
              s.replayEndpoint(),
              s.topicFilter()));
    }
    List<ActorSystem<Void>> ingress = new ArrayList<>();
    List<String> urls = new ArrayList<>();
    try {
      String seed = null;
      for (int i = 0; i < o.ingresses(); i++) {
        // Port 0: the node binds a free port and reports it (picking one up front could race
        // with the cluster transport's own free port).
        int port = o.ingressPort() == 0 ? 0 : o.ingressPort() + i;
        LocalIngress node =
            startIngress(
                seed,
                o.host(),
                port,
                ConfigFactory.parseMap(Map.of("kvrouter.tracker.policy.name", o.policy()))
                    .withFallback(ingressConfig));
        ingress.add(node.system());
        urls.add(node.url());
        if (seed == null) {
          seed = Cluster.get(node.system()).selfMember().address().toString();
        }
      }
      AgentSettings agentSettings =
          AgentSettings.of(specs)
              .withHeartbeat(Duration.ofMillis(500), 3)
              .withAdapterRefresh(Duration.ofMillis(500))
              .withTokenizers(RouterTokenizers.of(tokenizers));
      if (o.mismatchedBlockSize() > 0) {
        // The mismatched engine is there to be served and flagged by prediction accuracy: its
        // agent names the mismatch in an ERROR but serves it.
        agentSettings =
            agentSettings.withAlignment(agentSettings.alignment().withRefuseOnMismatch(false));
      }
      ActorSystem<Void> agent =
          NodeBootstrap.start(
              NodeSettings.dev(List.of(NodeSettings.ROLE_AGENT), List.of(seed))
                  .withOverrides(SHUTDOWN_BY_OWNER),
              Map.of(NodeSettings.ROLE_AGENT, AgentGuardian.roleGuardian(agentSettings)));
      return new DemoCluster(o, ingress, agent, fleet, mismatched, urls, tokenizers);
    } catch (RuntimeException e) {
      ingress.forEach(ActorSystem::terminate);
      fleet.close();
      if (mismatched != null) {
        mismatched.close();
      }
      tokenizers.close();
      throw e;
    }
  }

  /**
   * The deliberately mismatched engine (see {@link DemoOptions#mismatchedBlockSize}): replica
   * {@code sim-mismatched-0}, engine block size as asked, declared to the router with the
   * template's.
   */
  private static SimFleet startMismatched(DemoOptions o, int index, SimEngineSettings template)
      throws IOException {
    return SimFleet.start(
        1,
        "sim-mismatched",
        o.enginePort() == 0 ? 0 : o.enginePort() + index,
        o.kvEventsPort() == 0 ? 0 : o.kvEventsPort() + 2 * index,
        template.withEngine(template.engine().withBlockSize(o.mismatchedBlockSize())));
  }

  /**
   * Waits until every ingress is ready and lists every engine as a replica.
   *
   * @throws IllegalStateException when that does not happen within {@code timeout}
   */
  public void awaitReady(Duration timeout) throws InterruptedException {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "not asked yet";
    while (System.nanoTime() < deadline) {
      last = readiness(client);
      if (last == null) {
        return;
      }
      Thread.sleep(100); // a readiness poll of real HTTP servers, bounded by the deadline
    }
    throw new IllegalStateException("demo cluster not ready after " + timeout + ": " + last);
  }

  /** Null when everything is ready, otherwise what is missing. */
  private String readiness(HttpClient client) {
    for (String url : ingressUrls) {
      try {
        HttpResponse<String> ready =
            client.send(
                HttpRequest.newBuilder(URI.create(url + "/ready"))
                    .timeout(Duration.ofSeconds(2))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (ready.statusCode() != 200) {
          return url + "/ready answered " + ready.statusCode();
        }
        HttpResponse<String> replicas =
            client.send(
                HttpRequest.newBuilder(URI.create(url + "/admin/replicas"))
                    .timeout(Duration.ofSeconds(2))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (replicas.statusCode() != 200) {
          return url + " answered " + replicas.statusCode();
        }
        JsonNode list = JSON.readTree(replicas.body());
        if (list.size() < options.replicas()) {
          return url + " knows " + list.size() + " of " + options.replicas() + " replicas";
        }
      } catch (IOException e) {
        return url + ": " + e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "interrupted";
      }
    }
    return null;
  }

  public List<String> ingressUrls() {
    return List.copyOf(ingressUrls);
  }

  public List<String> engineUrls() {
    List<String> urls = new ArrayList<>(fleet.engines().stream().map(e -> e.baseUrl()).toList());
    if (mismatched != null) {
      mismatched.engines().forEach(e -> urls.add(e.baseUrl()));
    }
    return List.copyOf(urls);
  }

  /**
   * The regular simulated engines, in replica order (sim-0, sim-1, ...), e.g. to kill one; without
   * the mismatched one.
   */
  public SimFleet fleet() {
    return fleet;
  }

  public List<ActorSystem<Void>> ingressNodes() {
    return List.copyOf(ingressNodes);
  }

  public ActorSystem<Void> agentNode() {
    return agentNode;
  }

  public DemoOptions options() {
    return options;
  }

  public TokenizerRegistry tokenizers() {
    return tokenizers;
  }

  /**
   * Stops every node: the agent and every ingress but the seed together, then the seed, then the
   * engines. The seed stays up to see the others leave, so none waits out its cluster-exiting
   * timeout (10 s) for want of someone to confirm its exit; the seed, alone by then, leaves at
   * once. The demo's nodes register no JVM shutdown hooks ({@link #SHUTDOWN_BY_OWNER}), so the
   * demo's own hook calls this on SIGTERM.
   */
  @Override
  public void close() {
    List<ActorSystem<?>> others = new ArrayList<>();
    others.add(agentNode);
    others.addAll(ingressNodes.subList(1, ingressNodes.size()));
    stopCluster(ingressNodes.get(0), others);
    closeEngines();
  }

  /**
   * Stops an in-process cluster: {@code others} leave together while {@code seed} is up to confirm
   * their exit, then {@code seed} leaves alone. Stopping them all at once would leave the last ones
   * with no one to confirm their exit, and each would wait out its cluster-exiting timeout (10 s).
   * Nodes already stopped are fine.
   */
  public static void stopCluster(ActorSystem<?> seed, Collection<? extends ActorSystem<?>> others) {
    others.forEach(ActorSystem::terminate);
    others.forEach(node -> node.getWhenTerminated().toCompletableFuture().join());
    seed.terminate();
    seed.getWhenTerminated().toCompletableFuture().join();
  }

  private void closeEngines() {
    fleet.close();
    if (mismatched != null) {
      mismatched.close();
    }
    tokenizers.close();
  }

  /** An ingress node running in this JVM, and the base URL its HTTP front bound. */
  public record LocalIngress(ActorSystem<Void> system, String url) {}

  /**
   * Starts an ingress node in this JVM and waits until its HTTP front is bound (it binds once the
   * node is wired). Debug endpoints are on: the demo shows fault injection on the dashboard and
   * tests inject faults; never in production.
   *
   * @param seed the cluster to join, or null to form a new one
   * @param port HTTP port; 0 picks a free one (picking one up front could race with the cluster
   *     transport's own free port)
   * @param overrides further configuration of the node
   */
  public static LocalIngress startIngress(String seed, String host, int port, Config overrides)
      throws IOException {
    CompletableFuture<InetSocketAddress> bound = new CompletableFuture<>();
    NodeSettings node =
        NodeSettings.dev(
                List.of(NodeSettings.ROLE_INGRESS), seed == null ? List.of() : List.of(seed))
            .withOverrides(
                overrides
                    .withFallback(
                        ConfigFactory.parseMap(
                            Map.of(
                                "kvrouter.ingress.http.port",
                                port,
                                "kvrouter.ingress.http.host",
                                host,
                                "kvrouter.ingress.debug-endpoints",
                                true)))
                    .withFallback(SHUTDOWN_BY_OWNER));
    ActorSystem<Void> system =
        NodeBootstrap.start(
            node, Map.of(NodeSettings.ROLE_INGRESS, IngressGuardian.roleGuardian(bound::complete)));
    try {
      return new LocalIngress(
          system, "http://" + host + ":" + bound.get(60, TimeUnit.SECONDS).getPort());
    } catch (Exception e) {
      throw new IllegalStateException("ingress HTTP did not bind within 60 s", e);
    }
  }
}
