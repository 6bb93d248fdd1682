package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.AgentGuardian;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.agent.DataParallelRanks;
import io.kvrouter.agent.EngineSettings;
import io.kvrouter.agent.ReplicaSpec;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.testing.LoopbackHttp;
import io.kvrouter.testing.SglangEngineDouble;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.index.ReplicaDigest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * An SGLang engine ({@link SglangEngineDouble}: SGLang's radix cache, SHA-256 page hashes, ZMQ
 * publisher and replay, two attention data-parallel ranks) served through two ingress nodes, its
 * events read by an agent node with {@code kvrouter.agent.engine.kind = sglang}, as {@code kvrouter
 * agent --engine-kind sglang --dp-size 2} builds it. Requests go through the ingress's OpenAI route
 * as token ids; the ingress names the rank in the {@code X-Data-Parallel-Rank} header, which
 * SGLang's OpenAI routes read. What every tracker holds of each rank is compared with the double's
 * own block set through the digests {@code /admin/consistency} reports.
 *
 * <p>One test per fault, in order on one cluster: routing to the cached rank, the index equal to
 * the engine's blocks, a gap repaired, a restart that clears the replica.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SglangServingIT {

  private static final String MODEL = "m";
  private static final int PAGE = 16;
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  private static ClusterHarness cluster;
  private static SglangEngineDouble engine;
  private static ActorSystem<Void> agentNode;
  private static ActorTestKit kit;
  private static List<String> replicas;

  @BeforeAll
  static void start() throws Exception {
    engine = new SglangEngineDouble(2, PAGE, 64);
    cluster = new ClusterHarness(1);
    cluster.addIngress(ConfigFactory.empty());
    cluster.addIngress(ConfigFactory.empty());
    kit = ActorTestKit.create(cluster.ingresses().get(0).system());
    ReplicaSpec spec =
        new ReplicaSpec(
            "sglang-0",
            0,
            MODEL,
            engine.baseUrl(),
            PAGE,
            engine.kvEventsEndpoint(),
            engine.replayEndpoint(),
            "",
            ReplicaInfo.BOTH,
            engine.dpSize());
    List<ReplicaSpec> ranks = DataParallelRanks.expand(spec, engine.dpSize(), engine.dpSize());
    replicas = ranks.stream().map(r -> r.info().targetId()).toList();
    AgentSettings settings =
        AgentSettings.of(ranks)
            .withHeartbeat(Duration.ofMillis(200), 5)
            .withEngine(new EngineSettings("sglang", ""));
    agentNode =
        NodeBootstrap.start(
            NodeSettings.dev(
                List.of(NodeSettings.ROLE_AGENT), List.of(cluster.ingresses().get(0).id())),
            Map.of(NodeSettings.ROLE_AGENT, AgentGuardian.roleGuardian(settings)));
    cluster.awaitReady(kit, replicas.size());
  }

  @AfterAll
  static void stop() {
    if (agentNode != null) {
      agentNode.terminate();
      agentNode.getWhenTerminated().toCompletableFuture().join();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (engine != null) {
      engine.close();
    }
  }

  /**
   * Two prompts served through the ingress, then each one extended: the extension goes to the rank
   * that served its prefix (the {@code x-kvrouter-replica} header), where SGLang reports the
   * prefix's whole pages cached, as the router predicted.
   */
  @Test
  @Order(1)
  void repeatedPrompts_landWhereTheyAreCached() throws Exception {
    int[] a = tokens(10_000, 4);
    int[] b = tokens(20_000, 3);
    Served first = complete(a);
    awaitExact();
    Served second = complete(b);
    awaitExact();
    // b first: SGLang's round robin (what serves a request whose rank is not named) would send it
    // to a's rank, so only the named rank passes
    for (int[] prompt : List.of(b, a)) {
      String holder = prompt == a ? first.replica() : second.replica();
      int[] longer = concat(prompt, tokens(30_000 + prompt.length, 2));
      Served again = complete(longer);
      assertThat(again.replica()).as("the rank holding the prefix").isEqualTo(holder);
      assertThat(again.cached()).as("cached tokens SGLang reports").isEqualTo(prompt.length);
      assertThat(again.predicted())
          .as("cached tokens the router predicted")
          .isEqualTo(prompt.length);
      awaitExact();
    }
  }

  /**
   * Prompts that split SGLang's radix nodes (it re-announces the pages under new parents) and more
   * pages than a rank holds (it evicts leaves): every tracker holds exactly the double's blocks.
   */
  @Test
  @Order(2)
  void index_equalsTheEnginesOwnBlockSet_throughSplitsAndEvictions() throws Exception {
    int[] base = tokens(50_000, 6);
    List<int[]> prompts = new ArrayList<>();
    prompts.add(base);
    prompts.add(concat(Arrays.copyOf(base, PAGE), tokens(51_000, 3))); // splits after a page
    for (int i = 0; i < 12; i++) {
      prompts.add(tokens(60_000 + i * 1_000, 8)); // 96 pages over 2 ranks of 64: evictions
    }
    for (int[] p : prompts) {
      complete(p);
    }
    awaitExact();
  }

  /**
   * Batches lost on a rank's PUB socket leave a gap that the agent fills from SGLang's replay
   * socket: the trackers hold exactly the rank's blocks again, in the same epoch (no clean slate).
   */
  @Test
  @Order(3)
  void gap_isRepairedThroughReplay_inTheSameEpoch() throws Exception {
    awaitExact();
    List<Long> epochs = epochs();
    engine.dropNext(1, 2);
    engine.generate(1, tokens(70_000, 2)); // lost
    engine.generate(1, tokens(71_000, 3)); // lost
    engine.generate(1, tokens(72_000, 1)); // arrives after the gap
    awaitExact();
    assertThat(epochs()).as("epochs of the ranks").isEqualTo(epochs);
  }

  /**
   * SGLang restarts without a word (seq from 0, empty trees, /health never failing): every tracker
   * takes both ranks up in a new epoch holding exactly what the new process caches, and none of the
   * old process's pages.
   */
  @Test
  @Order(4)
  void restart_clearsTheReplicas_thenTheNewProcessIsTracked() throws Exception {
    awaitExact();
    List<Long> before = epochs();
    int[] old = tokens(80_000, 5);
    engine.generate(0, old); // straight to the engine: the router knows it from events alone
    engine.generate(1, old);
    awaitExact();
    engine.restart();
    kit.createTestProbe()
        .awaitAssert(
            DEADLINE,
            Duration.ofMillis(50),
            () -> {
              for (int r = 0; r < replicas.size(); r++) {
                for (JsonNode c : cells(replicas.get(r))) {
                  assertThat(c.path("epoch").asLong()).isGreaterThan(before.get(r));
                }
              }
              return null;
            });
    complete(tokens(81_000, 3));
    awaitExact();
    Served again = complete(old);
    assertThat(again.predicted())
        .as("cached tokens the router predicts for the old pages")
        .isZero();
    assertThat(again.cached()).as("cached tokens the new process reports").isZero();
    awaitExact();
  }

  // ---- support ----

  /** What a request served through the ingress reported. */
  private record Served(String replica, int cached, int predicted) {}

  /** POSTs {@code prompt} as token ids to the first ingress's {@code /v1/completions}. */
  private static Served complete(int[] prompt) throws Exception {
    String body =
        LoopbackHttp.JSON.writeValueAsString(
            Map.of("model", MODEL, "prompt", prompt, "max_tokens", 1));
    HttpResponse<String> r =
        LoopbackHttp.post(cluster.ingresses().get(0).url() + "/v1/completions", body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode usage = LoopbackHttp.JSON.readTree(r.body()).path("usage");
    return new Served(
        r.headers().firstValue("x-kvrouter-replica").orElse(""),
        usage.path("prompt_tokens_details").path("cached_tokens").asInt(-1),
        Integer.parseInt(
            r.headers().firstValue("x-kvrouter-predicted-cached-tokens").orElse("-1")));
  }

  /** The replica's cell in each tracker of {@code /admin/consistency}. */
  private static List<JsonNode> cells(String replica) throws Exception {
    JsonNode view = LoopbackHttp.getJson(cluster.ingresses().get(0).url() + "/admin/consistency");
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode t : view.path("trackers")) {
      out.add(t.path("replicas").path(replica));
    }
    return out;
  }

  /** The epoch of each rank, on which every tracker agrees. */
  private static List<Long> epochs() throws Exception {
    List<Long> out = new ArrayList<>();
    for (String replica : replicas) {
      List<JsonNode> cells = cells(replica);
      long e = cells.get(0).path("epoch").asLong();
      for (JsonNode c : cells) {
        assertThat(c.path("epoch").asLong()).as(replica).isEqualTo(e);
      }
      out.add(e);
    }
    return out;
  }

  /** What a tracker holding exactly rank {@code rank}'s pages reports: count and digest. */
  private static ReplicaDigest expected(int rank) {
    BlockKeys keys = BlockKeys.of(MODEL, PAGE);
    PrefixIndex index = new PrefixIndex();
    long hash = 1;
    for (int[] prefix : engine.cachedPrefixes(rank)) {
      long[] k = keys.keys(prefix);
      index.store(
          0,
          new BlocksStored(
              BlocksStored.ROOT, new long[] {hash++}, new long[] {k[k.length - 1]}, Tier.GPU));
    }
    return index.digest(0);
  }

  /** Waits until every tracker holds exactly each rank's pages. */
  private static void awaitExact() {
    kit.createTestProbe()
        .awaitAssert(
            DEADLINE,
            Duration.ofMillis(50),
            () -> {
              for (int r = 0; r < replicas.size(); r++) {
                ReplicaDigest want = expected(r);
                List<JsonNode> cells = cells(replicas.get(r));
                assertThat(cells).hasSize(cluster.ingresses().size());
                for (JsonNode c : cells) {
                  assertThat(c.path("blocks").asLong())
                      .as("blocks of %s in %s", replicas.get(r), c)
                      .isEqualTo(want.count());
                  assertThat(c.path("digest").asText())
                      .as("digest of %s", replicas.get(r))
                      .isEqualTo(Long.toHexString(want.sum()));
                }
              }
              return null;
            });
  }

  private static int[] tokens(int from, int pages) {
    return IntStream.range(from, from + pages * PAGE).toArray();
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
