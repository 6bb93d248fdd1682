package io.kvrouter.systemtest.cluster;

import static io.kvrouter.testing.LoopbackHttp.getJson;
import static io.kvrouter.testing.LoopbackHttp.status;
import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.AgentGuardian;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.cli.RouterTokenizers;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.ModelSimTokenizer;
import io.kvrouter.cli.dev.SimAgentCommand;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.sim.SimFleet;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * A kvrouter cluster in one JVM whose nodes tests add, stop and restart one by one: ingress nodes
 * (with extra configuration, e.g. fault injection) and agent nodes, each agent serving its own
 * simulated engines over real loopback HTTP and ZMQ.
 */
final class ClusterHarness implements AutoCloseable {

  static final String MODEL = "kvrouter-demo";

  /** A running ingress node. */
  record Ingress(ActorSystem<Void> system, String url) {
    String id() {
      return Cluster.get(system).selfMember().address().toString();
    }
  }

  /** A running agent node and its engines. */
  record Agent(ActorSystem<Void> system, SimFleet fleet, String prefix) {}

  private final TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
  private final List<Ingress> ingresses = new ArrayList<>();
  private final Map<String, Agent> agents = new HashMap<>();
  private String seed;
  private final double speedup;

  /**
   * @param speedup speed-up of the simulated engines' timing model
   */
  ClusterHarness(double speedup) {
    this.speedup = speedup;
  }

  Ingress addIngress(Config extra) throws IOException {
    DemoCluster.LocalIngress node = DemoCluster.startIngress(seed, "127.0.0.1", 0, extra);
    if (seed == null) {
      seed = Cluster.get(node.system()).selfMember().address().toString();
    }
    Ingress ingress = new Ingress(node.system(), node.url());
    ingresses.add(ingress);
    return ingress;
  }

  /** Waits until every ingress is ready and lists {@code replicas} replicas. */
  void awaitReady(ActorTestKit kit, int replicas) {
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(60),
            Duration.ofMillis(200),
            () -> {
              for (Ingress i : ingresses) {
                assertThat(status(i.url() + "/ready")).as(i.url() + "/ready").isEqualTo(200);
                assertThat(getJson(i.url() + "/admin/replicas").size()).isEqualTo(replicas);
              }
              return null;
            });
  }

  /** Starts (or restarts, with a new epoch) an agent node serving {@code engines} sim engines. */
  Agent startAgent(String prefix, int engines) throws IOException {
    Agent old = agents.get(prefix);
    SimFleet fleet;
    if (old != null) {
      fleet = old.fleet(); // the engines keep running; only the agent restarts
    } else {
      SimEngineSettings template =
          SimEngineSettings.loopback()
              .withModel(MODEL)
              .withTokenizer(ModelSimTokenizer.forModel(tokenizers, MODEL))
              .withEngine(SimEngineConfig.defaults().withTiming(new MockerTimingModel(speedup)));
      fleet = SimFleet.start(engines, prefix, 0, 0, template);
    }
    ActorSystem<Void> system =
        NodeBootstrap.start(
            NodeSettings.dev(List.of(NodeSettings.ROLE_AGENT), List.of(seed)),
            Map.of(
                NodeSettings.ROLE_AGENT,
                AgentGuardian.roleGuardian(
                    AgentSettings.of(SimAgentCommand.specs(fleet))
                        .withHeartbeat(Duration.ofMillis(300), 3)
                        .withTokenizers(RouterTokenizers.of(tokenizers)))));
    Agent agent = new Agent(system, fleet, prefix);
    agents.put(prefix, agent);
    return agent;
  }

  /** Stops an agent node (its engines keep running). */
  void stopAgent(String prefix) {
    Agent a = agents.get(prefix);
    a.system().terminate();
    a.system().getWhenTerminated().toCompletableFuture().join();
  }

  List<Ingress> ingresses() {
    return List.copyOf(ingresses);
  }

  Agent agent(String prefix) {
    return agents.get(prefix);
  }

  /** Stops every node (the first ingress, the seed, last: see {@link DemoCluster#stopCluster}). */
  @Override
  public void close() {
    List<ActorSystem<?>> others = new ArrayList<>();
    agents.values().forEach(a -> others.add(a.system()));
    ingresses.subList(1, ingresses.size()).forEach(i -> others.add(i.system()));
    DemoCluster.stopCluster(ingresses.get(0).system(), others);
    agents.values().forEach(a -> a.fleet().close());
    tokenizers.close();
  }
}
