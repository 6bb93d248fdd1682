package io.kvrouter.cli;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.AgentGuardian;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.agent.DataParallelRanks;
import io.kvrouter.agent.ReplicaSpec;
import io.kvrouter.agent.SimFleet;
import io.kvrouter.agent.sim.SimApis;
import io.kvrouter.agent.sim.SimEngineSettings;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.loadtest.demo.ModelSimTokenizer;
import io.kvrouter.loadtest.demo.RouterTokenizers;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorSystem;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kvrouter agent}: a replica agent node serving one or more engines. */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    description =
        "Run a replica agent node: turns an engine's KV events into cluster events and registers"
            + " its replicas. Point it at an engine (--engine-url, --kv-events, --replay) or let it"
            + " start simulated engines in-process (--sim N).")
final class AgentCommand implements Callable<Integer> {

  @Mixin NodeOptions node;

  @Option(
      names = "--engine-url",
      paramLabel = "URL",
      description = "The engine's OpenAI base URL, e.g. http://host:8000.")
  String engineUrl;

  @Option(
      names = "--kv-events",
      paramLabel = "ENDPOINT",
      description =
          "The engine's ZMQ KV-event PUB endpoint, e.g. tcp://host:5557. Without it the"
              + " agent runs in approximate mode (publishes nothing about blocks).")
  String kvEvents;

  @Option(
      names = "--replay",
      paramLabel = "ENDPOINT",
      description = "The engine's ZMQ replay endpoint, e.g. tcp://host:5558.")
  String replay;

  @Option(
      names = "--topic-filter",
      defaultValue = "",
      description = "ZMQ SUB prefix filter (default: all topics).")
  String topicFilter;

  @Option(
      names = "--replica-id",
      description = "Replica id (default: host:port of --engine-url; sim-<i> with --sim).")
  String replicaId;

  @Option(
      names = "--model",
      defaultValue = "kvrouter-demo",
      description = "Model the engine serves (default: ${DEFAULT-VALUE}).")
  String model;

  @Option(
      names = "--block-size",
      defaultValue = "16",
      description = "The engine's KV block size (default: ${DEFAULT-VALUE}).")
  int blockSize;

  @Option(
      names = "--dp-rank",
      defaultValue = "0",
      description =
          "Data-parallel rank of the engine's first event stream (vLLM's"
              + " --data-parallel-start-rank; default: ${DEFAULT-VALUE}).")
  int dpRank;

  @Option(
      names = "--dp-size",
      defaultValue = "1",
      description =
          "Data-parallel ranks of the engine (with --sim: of each simulated engine). Ranks --dp-rank"
              + " to --dp-size - 1 each become a replica, subscribed at the --kv-events and --replay"
              + " ports plus the rank, as vLLM binds them (default: ${DEFAULT-VALUE}).")
  int dpSize;

  @Option(
      names = "--role",
      defaultValue = "both",
      description =
          "What the replicas do in prefill/decode disaggregation: both, prefill or decode"
              + " (default: ${DEFAULT-VALUE}).")
  String role;

  @Option(
      names = "--heartbeat-ms",
      description =
          "Load scrape and health check interval (default: kvrouter.agent.heartbeat-interval,"
              + " 1 s).")
  Long heartbeatMillis;

  @Option(
      names = "--sim",
      defaultValue = "0",
      description = "Start N simulated engines in-process instead of --engine-url.")
  int sim;

  @Option(
      names = "--sim-host",
      defaultValue = "127.0.0.1",
      description =
          "Address the simulated engines bind and are announced at; on several machines give"
              + " this host's address, which ingresses must reach (default: ${DEFAULT-VALUE}).")
  String simHost;

  @Option(
      names = "--sim-http-base",
      defaultValue = "8000",
      description =
          "HTTP port of simulated engine 0 (then +1 each; 0 = free ports; default: ${DEFAULT-VALUE}).")
  int simHttpBase;

  @Option(
      names = "--sim-zmq-base",
      defaultValue = "5557",
      description =
          "KV-event port of simulated engine 0 (replay on +1, next engine +2; 0 = free"
              + " ports; default: ${DEFAULT-VALUE}).")
  int simZmqBase;

  /** The shape and speed of the engines {@code --sim} starts. */
  @Mixin SimEngineOptions simEngine;

  @Override
  public Integer call() throws Exception {
    SimFleet fleet = null;
    List<ReplicaSpec> replicas;
    TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
    if (sim > 0) {
      SimEngineSettings template =
          SimEngineSettings.loopback()
              .withHost(simHost)
              .withModel(model)
              .withTokenizer(ModelSimTokenizer.forModel(tokenizers, model))
              .withEngine(simEngine.config(blockSize))
              .withTransfer(simEngine.transfer())
              .withLoraModules(simEngine.loraModules())
              .withApis(SimApis.vllm().withRuntimeLora(simEngine.runtimeLora(false)))
              .withImages(simEngine.images())
              .withDataParallel(0, dpSize);
      fleet =
          SimFleet.start(
              java.util.Collections.nCopies(sim, role),
              replicaId == null ? "sim" : replicaId,
              simHttpBase,
              simZmqBase,
              template);
      replicas = fleet.specs();
      for (ReplicaSpec r : replicas) {
        System.out.println(
            "kvrouter agent: simulated engine "
                + r.replicaId()
                + " at "
                + r.baseUrl()
                + ", KV events "
                + r.kvEventsEndpoint()
                + ", replay "
                + r.replayEndpoint());
      }
    } else if (engineUrl != null) {
      URI uri = URI.create(engineUrl);
      String id = replicaId != null ? replicaId : uri.getHost() + ":" + uri.getPort();
      ReplicaSpec engine =
          new ReplicaSpec(
              id, dpRank, model, engineUrl, blockSize, kvEvents, replay, topicFilter, role, dpSize);
      replicas = DataParallelRanks.expand(engine, dpSize - dpRank, dpSize);
      if (kvEvents == null) {
        System.out.println("kvrouter agent: no --kv-events: approximate mode for " + id);
      }
    } else {
      System.err.println("kvrouter agent: give --engine-url (and --kv-events) or --sim N");
      return 2;
    }
    AgentSettings settings =
        AgentSettings.of(replicas).withTokenizers(RouterTokenizers.of(tokenizers));
    if (heartbeatMillis != null) {
      settings =
          settings.withHeartbeat(Duration.ofMillis(heartbeatMillis), settings.deadAfterFailures());
    }
    ActorSystem<Void> system =
        NodeBootstrap.start(
            node.toSettings(List.of(NodeSettings.ROLE_AGENT)),
            Map.of(NodeSettings.ROLE_AGENT, AgentGuardian.roleGuardian(settings)));
    SimFleet engines = fleet;
    if (engines != null) {
      system.getWhenTerminated().thenRun(engines::close);
    }
    return NodeRunner.printJoinedAndWait(system);
  }
}
