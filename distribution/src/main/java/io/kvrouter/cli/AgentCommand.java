package io.kvrouter.cli;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.AgentGuardian;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.agent.DataParallelRanks;
import io.kvrouter.agent.EngineSettings;
import io.kvrouter.agent.ReplicaSpec;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
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
            + " its replicas. Point it at an engine (--engine-url, --kv-events, --replay).")
public class AgentCommand implements Callable<Integer> {

  @Mixin protected NodeOptions node;

  @Option(
      names = "--engine-url",
      paramLabel = "URL",
      description = "The engine's OpenAI base URL, e.g. http://host:8000.")
  protected String engineUrl;

  @Option(
      names = "--kv-events",
      paramLabel = "ENDPOINT",
      description =
          "The engine's ZMQ KV-event PUB endpoint, e.g. tcp://host:5557; with --engine-kind"
              + " tensorrt-llm the engine's http://host:port, whose /kv_cache_events is polled."
              + " Without it the agent runs in approximate mode (publishes nothing about blocks).")
  protected String kvEvents;

  @Option(
      names = "--replay",
      paramLabel = "ENDPOINT",
      description = "The engine's ZMQ replay endpoint, e.g. tcp://host:5558.")
  protected String replay;

  @Option(
      names = "--topic-filter",
      defaultValue = "",
      description = "ZMQ SUB prefix filter (default: all topics).")
  protected String topicFilter;

  @Option(names = "--replica-id", description = "Replica id (default: host:port of --engine-url).")
  protected String replicaId;

  @Option(
      names = "--model",
      defaultValue = "kvrouter-demo",
      description = "Model the engine serves (default: ${DEFAULT-VALUE}).")
  protected String model;

  @Option(
      names = "--block-size",
      defaultValue = "16",
      description = "The engine's KV block size (default: ${DEFAULT-VALUE}).")
  protected int blockSize;

  @Option(
      names = "--dp-rank",
      defaultValue = "0",
      description =
          "Data-parallel rank of the engine's first event stream (vLLM's"
              + " --data-parallel-start-rank; default: ${DEFAULT-VALUE}).")
  protected int dpRank;

  @Option(
      names = "--dp-size",
      defaultValue = "1",
      description =
          "Data-parallel ranks of the engine. Ranks --dp-rank"
              + " to --dp-size - 1 each become a replica, subscribed at the --kv-events and --replay"
              + " ports plus the rank, as vLLM binds them (default: ${DEFAULT-VALUE}).")
  protected int dpSize;

  @Option(
      names = "--role",
      defaultValue = "both",
      description =
          "What the replicas do in prefill/decode disaggregation: both, prefill or decode"
              + " (default: ${DEFAULT-VALUE}).")
  protected String role;

  @Option(
      names = "--engine-kind",
      description =
          "The engine software, shown on /admin/replicas: vllm, sglang or tensorrt-llm"
              + " (default: kvrouter.agent.engine.kind, vllm).")
  protected String engineKind;

  @Option(
      names = "--hash-algo",
      description =
          "The engine's prefix-caching hash algorithm, shown on /admin/replicas (vLLM's"
              + " --prefix-caching-hash-algo; default: learned from the engine's metrics).")
  protected String hashAlgo;

  @Option(
      names = "--heartbeat-ms",
      description =
          "Load scrape and health check interval (default: kvrouter.agent.heartbeat-interval,"
              + " 1 s).")
  protected Long heartbeatMillis;

  @Override
  public Integer call() throws Exception {
    TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
    List<ReplicaSpec> replicas = replicas(tokenizers);
    if (replicas == null) {
      System.err.println("kvrouter agent: " + missingEngineMessage());
      return 2;
    }
    AgentSettings settings =
        AgentSettings.of(replicas).withTokenizers(RouterTokenizers.of(tokenizers));
    if (engineKind != null || hashAlgo != null) {
      settings =
          settings.withEngine(
              new EngineSettings(
                  engineKind != null ? engineKind : settings.engine().kind(),
                  hashAlgo != null ? hashAlgo : settings.engine().hashAlgo()));
    }
    if (heartbeatMillis != null) {
      settings =
          settings.withHeartbeat(Duration.ofMillis(heartbeatMillis), settings.deadAfterFailures());
    }
    ActorSystem<Void> system =
        NodeBootstrap.start(
            node.toSettings(List.of(NodeSettings.ROLE_AGENT)),
            Map.of(NodeSettings.ROLE_AGENT, AgentGuardian.roleGuardian(settings)));
    system.getWhenTerminated().thenRun(this::stopped);
    return NodeRunner.printJoinedAndWait(system);
  }

  /** The replicas to serve: the engine of {@code --engine-url}'s ranks; null when none is given. */
  protected List<ReplicaSpec> replicas(TokenizerRegistry tokenizers) throws Exception {
    if (engineUrl == null) {
      return null;
    }
    URI uri = URI.create(engineUrl);
    String id = replicaId != null ? replicaId : uri.getHost() + ":" + uri.getPort();
    ReplicaSpec engine =
        new ReplicaSpec(
            id, dpRank, model, engineUrl, blockSize, kvEvents, replay, topicFilter, role, dpSize);
    if (kvEvents == null) {
      System.out.println("kvrouter agent: no --kv-events: approximate mode for " + id);
    }
    return DataParallelRanks.expand(engine, dpSize - dpRank, dpSize);
  }

  /** What the command says when it was given no engine. */
  protected String missingEngineMessage() {
    return "give --engine-url (and --kv-events)";
  }

  /** The node has stopped: what {@link #replicas} started ends here. */
  protected void stopped() {}
}
