package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.AgentGuardian;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.agent.ReplicaSpec;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.Topics;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.systemtest.engine.IndependentVllmEngine;
import io.kvrouter.testing.LoopbackHttp;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.index.ReplicaDigest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;

/**
 * Two ingress nodes (real trackers) and one agent node in one JVM, the agent serving one {@link
 * IndependentVllmEngine} through {@code --engine-url --kv-events --replay} as the {@code kvrouter
 * agent} command builds it, and a probe on the load topic. What the trackers hold of the replica is
 * compared with what the engine holds through the digests {@code /admin/consistency} reports.
 */
final class EngineRig implements AutoCloseable {

  static final String REPLICA = "engine-0";

  /** A heartbeat and when it arrived. */
  record Heard(ReplicaLoad load, long atNanos) {}

  final ClusterHarness cluster = new ClusterHarness(1);
  final IndependentVllmEngine engine;
  final ActorTestKit kit;

  /** Every load heartbeat the first ingress node received, with when ({@link System#nanoTime}). */
  final List<Heard> loads = new CopyOnWriteArrayList<>();

  final Duration heartbeat;
  private ActorSystem<Void> agentNode;

  EngineRig(IndependentVllmEngine.Config config, Duration heartbeat, int deadAfter)
      throws Exception {
    this(config, heartbeat, deadAfter, config.blockSize(), UnaryOperator.identity());
  }

  /**
   * @param declaredBlockSize the block size the agent is told ({@code --block-size})
   * @param tune changes to the agent's settings (as {@code kvrouter agent} options would make)
   */
  EngineRig(
      IndependentVllmEngine.Config config,
      Duration heartbeat,
      int deadAfter,
      int declaredBlockSize,
      UnaryOperator<AgentSettings> tune)
      throws Exception {
    this.heartbeat = heartbeat;
    this.engine = IndependentVllmEngine.start(config);
    cluster.addIngress(ConfigFactory.empty());
    cluster.addIngress(ConfigFactory.empty());
    kit = ActorTestKit.create(cluster.ingresses().get(0).system());
    ActorRef<Topic.Command<ReplicaLoad>> topic = kit.spawn(Topics.replicaLoad());
    ActorRef<ReplicaLoad> recorder =
        kit.spawn(
            Behaviors.receiveMessage(
                l -> {
                  loads.add(new Heard(l, System.nanoTime()));
                  return Behaviors.same();
                }));
    topic.tell(Topic.subscribe(recorder));
    ReplicaSpec spec =
        new ReplicaSpec(
            REPLICA,
            0,
            config.model(),
            engine.baseUrl(),
            declaredBlockSize,
            engine.kvEventsEndpoint(),
            engine.replayEndpoint(),
            "");
    String seed = cluster.ingresses().get(0).id();
    agentNode =
        NodeBootstrap.start(
            NodeSettings.dev(List.of(NodeSettings.ROLE_AGENT), List.of(seed)),
            Map.of(
                NodeSettings.ROLE_AGENT,
                AgentGuardian.roleGuardian(
                    tune.apply(
                        AgentSettings.of(List.of(spec)).withHeartbeat(heartbeat, deadAfter)))));
  }

  /** Sends {@code n} distinct prompts of about {@code chars} characters straight to the engine. */
  void warm(int n, int chars, long seed) throws Exception {
    for (int i = 0; i < n; i++) {
      StringBuilder p = new StringBuilder("conversation " + (seed * 1000 + i) + ":");
      while (p.length() < chars) {
        p.append(" and then ").append(p.length() * 31 % 97);
      }
      String body =
          LoopbackHttp.JSON
              .createObjectNode()
              .put("model", engine.config().model())
              .put("prompt", p.toString())
              .put("max_tokens", 8)
              .toString();
      assertThat(LoopbackHttp.post(engine.baseUrl() + "/v1/completions", body).statusCode())
          .isEqualTo(200);
    }
  }

  /** What a tracker holding exactly the engine's blocks reports: count and digest. */
  ReplicaDigest expected() {
    return digestOf(engine.config().model(), engine.config().blockSize(), engine.cachedPrefixes());
  }

  /**
   * What a tracker reports that holds exactly the blocks ending {@code prefixes} (each a token
   * prefix from the first block on, a whole number of blocks): count and digest.
   */
  static ReplicaDigest digestOf(String model, int blockSize, Iterable<int[]> prefixes) {
    BlockKeys keys = BlockKeys.of(model, blockSize);
    PrefixIndex index = new PrefixIndex();
    long hash = 1;
    for (int[] prefix : prefixes) {
      long[] k = keys.keys(prefix);
      index.store(
          0,
          new BlocksStored(
              BlocksStored.ROOT, new long[] {hash++}, new long[] {k[k.length - 1]}, Tier.GPU));
    }
    return index.digest(0);
  }

  /** The replica's cell of every tracker in {@code /admin/consistency}. */
  List<JsonNode> cells() throws Exception {
    return cells(cluster, REPLICA);
  }

  /** Replica {@code replica}'s cell of every tracker in the first ingress's consistency view. */
  static List<JsonNode> cells(ClusterHarness cluster, String replica) throws Exception {
    JsonNode view = LoopbackHttp.getJson(cluster.ingresses().get(0).url() + "/admin/consistency");
    List<JsonNode> out = new java.util.ArrayList<>();
    for (JsonNode t : view.path("trackers")) {
      out.add(t.path("replicas").path(replica));
    }
    return out;
  }

  /** Null when every tracker holds exactly the engine's blocks, else what differs. */
  String mismatch() throws Exception {
    return mismatch(cluster, REPLICA, expected());
  }

  /**
   * Null when every tracker holds replica {@code replica} as {@code want} in one epoch, else what
   * differs.
   */
  static String mismatch(ClusterHarness cluster, String replica, ReplicaDigest want)
      throws Exception {
    List<JsonNode> cells = cells(cluster, replica);
    if (cells.size() != cluster.ingresses().size()) {
      return "trackers answering: " + cells.size();
    }
    long epoch = cells.get(0).path("epoch").asLong(-1);
    for (JsonNode c : cells) {
      if (epoch <= 0 || c.path("epoch").asLong(-1) != epoch) {
        return "trackers disagree on the epoch or miss the replica: " + cells;
      }
      if (c.path("blocks").asLong(-1) != want.count()
          || !c.path("digest").asText().equals(Long.toHexString(want.sum()))) {
        return "tracker holds "
            + c
            + ", engine "
            + want.count()
            + " blocks, digest "
            + Long.toHexString(want.sum());
      }
    }
    return null;
  }

  /** Waits until the trackers hold exactly the engine's blocks; returns when it saw that. */
  long awaitExact(Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    String last;
    while ((last = mismatch()) != null) {
      assertThat(System.nanoTime()).as("trackers exact; last seen: %s", last).isLessThan(deadline);
      Thread.sleep(20); // polling interval of a bounded wait
    }
    return System.nanoTime();
  }

  /** Waits until every tracker holds the replica in an epoch after {@code epoch}; returns when. */
  long awaitEpochAfter(long epoch, Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      List<JsonNode> cells = cells();
      if (cells.size() == cluster.ingresses().size()
          && cells.stream().allMatch(c -> c.path("epoch").asLong(-1) > epoch)) {
        return System.nanoTime();
      }
      assertThat(System.nanoTime()).as("a new epoch; last seen %s", cells).isLessThan(deadline);
      Thread.sleep(20); // polling interval of a bounded wait
    }
  }

  /** The epoch every tracker holds for the replica (they must agree). */
  long epoch() throws Exception {
    List<JsonNode> cells = cells();
    long e = cells.get(0).path("epoch").asLong();
    for (JsonNode c : cells) {
      assertThat(c.path("epoch").asLong()).isEqualTo(e);
    }
    return e;
  }

  /** Waits until every ingress lists the replica (the agent registered it). */
  void awaitRegistered(Duration within) {
    kit.createTestProbe()
        .awaitAssert(
            within,
            Duration.ofMillis(50),
            () -> {
              for (ClusterHarness.Ingress i : cluster.ingresses()) {
                assertThat(
                        LoopbackHttp.getJson(i.url() + "/admin/replicas")
                            .findValuesAsText("replica"))
                    .contains(REPLICA);
              }
              return null;
            });
  }

  /** Waits until {@code n} heartbeats arrived after {@code sinceNanos}. */
  void awaitHeartbeatsAfter(long sinceNanos, int n, Duration within) {
    kit.createTestProbe()
        .awaitAssert(
            within,
            Duration.ofMillis(50),
            () -> {
              assertThat(loads.stream().filter(h -> h.atNanos() > sinceNanos).count())
                  .isGreaterThanOrEqualTo(n);
              return null;
            });
  }

  /**
   * Waits until {@code /admin/consistency} reports the replica converged on every tracker (same
   * watermark, same digest). The top-level flag also covers the reservation streams, which these
   * tests leave idle: an ingress that never reserved anything shows as lagging there.
   */
  void awaitConverged(Duration within) {
    kit.createTestProbe()
        .awaitAssert(
            within,
            Duration.ofMillis(100),
            () -> {
              List<JsonNode> cells = cells();
              assertThat(cells).hasSize(cluster.ingresses().size());
              for (JsonNode c : cells) {
                assertThat(c.path("state").asText()).as(cells.toString()).isEqualTo("converged");
                assertThat(c.path("digest")).isEqualTo(cells.get(0).path("digest"));
                assertThat(c.path("seq")).isEqualTo(cells.get(0).path("seq"));
              }
              return null;
            });
  }

  @Override
  public void close() {
    if (agentNode != null) {
      agentNode.terminate();
      agentNode.getWhenTerminated().toCompletableFuture().join();
    }
    cluster.close();
    engine.close();
  }
}
