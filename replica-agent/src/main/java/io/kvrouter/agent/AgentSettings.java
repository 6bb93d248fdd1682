package io.kvrouter.agent;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.kvevents.SubscriberSettings;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * What an agent node runs: its replicas and {@code kvrouter.agent} from {@code reference.conf}
 * (where every setting is explained), read once.
 *
 * @param replicas the replicas it serves
 * @param heartbeatInterval how often it checks /health and scrapes /metrics
 * @param deadAfterFailures consecutive failed health checks before a replica is deregistered
 * @param probeTimeout longest wait for one /health or /metrics answer
 * @param ringCapacity stamped batches kept per replica for replay
 * @param maxReplayBatches most stamped batches in one replay answer to a tracker
 * @param knownHashes engine hashes remembered for parent lookup
 * @param kvEvents the engine event subscriber's waits, retries and audits
 * @param alignment the alignment probe
 * @param keyFunctions the router key function per model (the trackers' by default)
 * @param tokenizers the router's prompt tokenizer per model, or null for a model without one (then
 *     the alignment probe sends token ids and cannot check the tokenizer)
 * @param adapterRefresh how often a registered replica's engine is asked which LoRA adapters it
 *     serves ({@code GET /v1/models}) and its info announced again on {@code kvrouter-replica-info}
 * @param engine the engine's kind and hash algorithm as the operator states them
 */
public record AgentSettings(
    List<ReplicaSpec> replicas,
    Duration heartbeatInterval,
    int deadAfterFailures,
    Duration probeTimeout,
    int ringCapacity,
    int maxReplayBatches,
    int knownHashes,
    SubscriberSettings kvEvents,
    AlignmentSettings alignment,
    Function<String, RouterKeyFunction> keyFunctions,
    Function<String, RouterTokenizer> tokenizers,
    Duration adapterRefresh,
    EngineSettings engine) {

  public AgentSettings {
    replicas = List.copyOf(replicas);
  }

  /** Reads {@code kvrouter.agent} from {@code config}; trackers' keys, no tokenizers. */
  public static AgentSettings fromConfig(Config config, List<ReplicaSpec> replicas) {
    Config c = config.getConfig("kvrouter.agent");
    return new AgentSettings(
        replicas,
        c.getDuration("heartbeat-interval"),
        c.getInt("dead-after-failures"),
        c.getDuration("probe-timeout"),
        c.getInt("ring-capacity"),
        c.getInt("max-replay-batches"),
        c.getInt("known-hashes"),
        SubscriberSettings.fromConfig(c.getConfig("kv-events")),
        AlignmentSettings.fromConfig(c.getConfig("alignment"))
            .withSpeculative(config, replicas.stream().map(ReplicaSpec::model).toList()),
        TrackerRouterKeys::new,
        model -> null,
        c.getDuration("adapter-refresh-interval"),
        EngineSettings.fromConfig(c.getConfig("engine")));
  }

  /** {@link #fromConfig} with the application's configuration ({@code ConfigFactory.load()}). */
  public static AgentSettings of(List<ReplicaSpec> replicas) {
    return fromConfig(ConfigFactory.load(), replicas);
  }

  public AgentSettings withHeartbeat(Duration interval, int deadAfter) {
    return copy(interval, deadAfter, alignment, tokenizers, adapterRefresh, engine);
  }

  public AgentSettings withAlignment(AlignmentSettings a) {
    return copy(heartbeatInterval, deadAfterFailures, a, tokenizers, adapterRefresh, engine);
  }

  public AgentSettings withTokenizers(Function<String, RouterTokenizer> f) {
    return copy(heartbeatInterval, deadAfterFailures, alignment, f, adapterRefresh, engine);
  }

  /** The same agent re-reading its engines' LoRA adapters every {@code interval}. */
  public AgentSettings withAdapterRefresh(Duration interval) {
    return copy(heartbeatInterval, deadAfterFailures, alignment, tokenizers, interval, engine);
  }

  /** These settings with the components the withers change set to the given ones. */
  private AgentSettings copy(
      Duration heartbeat,
      int deadAfter,
      AlignmentSettings a,
      Function<String, RouterTokenizer> f,
      Duration refresh,
      EngineSettings e) {
    return new AgentSettings(
        replicas,
        heartbeat,
        deadAfter,
        probeTimeout,
        ringCapacity,
        maxReplayBatches,
        knownHashes,
        kvEvents,
        a,
        keyFunctions,
        f,
        refresh,
        e);
  }

  /** The same agent in front of the engine {@code e}. */
  public AgentSettings withEngine(EngineSettings e) {
    return copy(heartbeatInterval, deadAfterFailures, alignment, tokenizers, adapterRefresh, e);
  }
}
