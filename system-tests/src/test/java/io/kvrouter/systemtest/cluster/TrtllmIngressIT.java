package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.AgentGuardian;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.agent.EngineSettings;
import io.kvrouter.agent.ReplicaSpec;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.testing.LoopbackHttp;
import io.kvrouter.testing.TrtllmEngineDouble;
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
import org.junit.jupiter.api.Test;

/**
 * TensorRT-LLM behind kvrouter, end to end: {@link TrtllmEngineDouble}s (TensorRT-LLM's block
 * hashes, {@code trtllm-serve}'s {@code /kv_cache_events} and OpenAI routes, its silent restarts;
 * written from TensorRT-LLM's source, not from kvrouter's simulated engine) served by one agent
 * node with {@code engine.kind = tensorrt-llm} (alignment probe on), and an ingress node with its
 * tracker. Requests go through the ingress; what the tracker holds of each replica is compared with
 * the engine's own blocks through {@code /admin/consistency}'s digests. One test per fault.
 */
class TrtllmIngressIT {

  private static final String MODEL = ClusterHarness.MODEL;
  private static final int BS = 16;
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  /** Where one request went and what was cached there. */
  private record Served(String replica, int cachedTokens, int predictedCachedTokens) {}

  /** One ingress node, one agent node, {@code n} engines {@code trt-0..}. */
  private static final class Rig implements AutoCloseable {
    final ClusterHarness cluster = new ClusterHarness(1);
    final List<TrtllmEngineDouble> engines = new ArrayList<>();
    final ActorTestKit kit;
    final ActorSystem<Void> agentNode;

    Rig(int n, int primaryBlocks) throws Exception {
      cluster.addIngress(ConfigFactory.empty());
      kit = ActorTestKit.create(cluster.ingresses().get(0).system());
      List<ReplicaSpec> specs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        TrtllmEngineDouble e = new TrtllmEngineDouble(MODEL, BS, primaryBlocks, 0, 10_000);
        engines.add(e);
        specs.add(new ReplicaSpec(replica(i), 0, MODEL, e.baseUrl(), BS, e.baseUrl(), null, ""));
      }
      agentNode =
          NodeBootstrap.start(
              NodeSettings.dev(
                  List.of(NodeSettings.ROLE_AGENT), List.of(cluster.ingresses().get(0).id())),
              Map.of(
                  NodeSettings.ROLE_AGENT,
                  AgentGuardian.roleGuardian(
                      AgentSettings.of(specs)
                          .withHeartbeat(Duration.ofMillis(300), 3)
                          .withEngine(new EngineSettings(EngineSettings.TENSORRT_LLM, "")))));
      cluster.awaitReady(kit, n);
    }

    static String replica(int i) {
      return "trt-" + i;
    }

    /** {@code POST /v1/completions} of {@code prompt} (token ids) through the ingress. */
    Served complete(int[] prompt) throws Exception {
      JsonNode body =
          LoopbackHttp.JSON
              .createObjectNode()
              .put("model", MODEL)
              .put("max_tokens", 1)
              .set("prompt", LoopbackHttp.JSON.valueToTree(prompt));
      HttpResponse<String> r =
          LoopbackHttp.post(cluster.ingresses().get(0).url() + "/v1/completions", body);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      return new Served(
          r.headers().firstValue("x-kvrouter-replica").orElse(""),
          LoopbackHttp.JSON
              .readTree(r.body())
              .path("usage")
              .path("prompt_tokens_details")
              .path("cached_tokens")
              .asInt(-1),
          Integer.parseInt(
              r.headers().firstValue("x-kvrouter-predicted-cached-tokens").orElse("-1")));
    }

    /**
     * Waits until every replica's heartbeat reads idle. TensorRT-LLM's last iteration stats still
     * count the request that just finished (its {@code /metrics} answers them once, then {@code
     * []}), so a replica that served one looks busy until the agent's next scrape.
     */
    void awaitIdle() {
      kit.createTestProbe()
          .awaitAssert(
              DEADLINE,
              Duration.ofMillis(50),
              () -> {
                for (JsonNode r :
                    LoopbackHttp.getJson(cluster.ingresses().get(0).url() + "/admin/replicas")) {
                  assertThat(r.path("running").asInt(-1)).as("running on %s", r).isZero();
                  assertThat(r.path("waiting").asInt(-1)).as("waiting on %s", r).isZero();
                }
                return null;
              });
    }

    /** Waits until the tracker holds replica {@code i} exactly as its engine's GPU blocks. */
    void awaitExact(int i) {
      awaitHolds(i, () -> digest(engines.get(i).fullBlocks(0).values()));
    }

    /** Waits until the tracker holds replica {@code i} as {@code want} gives it. */
    void awaitHolds(int i, java.util.concurrent.Callable<ReplicaDigest> want) {
      kit.createTestProbe()
          .awaitAssert(
              DEADLINE,
              Duration.ofMillis(50),
              () -> {
                assertThat(EngineRig.mismatch(cluster, replica(i), want.call())).isNull();
                return null;
              });
    }

    long epoch(int i) throws Exception {
      return EngineRig.cells(cluster, replica(i)).get(0).path("epoch").asLong(-1);
    }

    @Override
    public void close() {
      agentNode.terminate();
      agentNode.getWhenTerminated().toCompletableFuture().join();
      cluster.close();
      engines.forEach(TrtllmEngineDouble::close);
    }
  }

  /**
   * Both replicas are announced as TensorRT-LLM, with the engine's version, and aligned (the
   * agent's probe saw its blocks through {@code /kv_cache_events}). Prompts first served straight
   * by one engine or the other; then each through the ingress, which sends it where the tracker's
   * picture (read from that engine's events only) holds it: the engine reports every full block
   * cached, as the router predicted.
   */
  @Test
  void repeatedPrompts_landWhereTheyAreCached_andTheTrackerHoldsEachEnginesOwnBlocks()
      throws Exception {
    try (Rig rig = new Rig(2, 256)) {
      for (JsonNode r :
          LoopbackHttp.getJson(rig.cluster.ingresses().get(0).url() + "/admin/replicas")) {
        assertThat(r.path("engine").path("kind").asText()).isEqualTo("tensorrt-llm");
        assertThat(r.path("engine").path("version").asText()).isEqualTo(TrtllmEngineDouble.VERSION);
        assertThat(r.path("alignment").path("state").asText())
            .as("the alignment probe, read through /kv_cache_events")
            .isEqualTo("aligned");
      }
      List<int[]> prompts = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        int[] p = tokens(10_000 * (i + 1), 2 + i % 3, 7);
        prompts.add(p);
        assertThat(rig.engines.get(i % 2).complete(p)).isZero();
      }
      rig.awaitExact(0);
      rig.awaitExact(1);
      for (int i = 0; i < prompts.size(); i++) {
        int full = prompts.get(i).length / BS * BS;
        rig.awaitIdle(); // so that the cache decides, not the last request's stats
        Served s = rig.complete(prompts.get(i));
        assertThat(s.replica()).as("prompt %d", i).isEqualTo(Rig.replica(i % 2));
        assertThat(s.cachedTokens()).as("cached on the engine").isEqualTo(full);
        assertThat(s.predictedCachedTokens()).as("predicted by the router").isEqualTo(full);
      }
    }
  }

  /**
   * Events lost between two polls (another reader drained {@code /kv_cache_events}), among them the
   * removal of a prompt's blocks: the replica starts a new epoch and the tracker holds exactly what
   * was stored since, so the evicted prompt is no longer predicted cached anywhere.
   */
  @Test
  void gap_startsANewEpoch_andTheTrackerHoldsExactlyWhatWasStoredSince() throws Exception {
    try (Rig rig = new Rig(1, 6)) {
      int[] first = tokens(1000, 3, 5);
      rig.complete(first);
      rig.awaitExact(0);
      long epoch = rig.epoch(0);

      TrtllmEngineDouble engine = rig.engines.get(0);
      assertThat(engine.completeUnseen(tokens(2000, 5, 5))).isPositive(); // evicts `first`
      int[] after = tokens(3000, 2, 5);
      rig.complete(after);
      rig.awaitHolds(
          0, () -> digest(List.of(Arrays.copyOf(after, BS), Arrays.copyOf(after, 2 * BS))));
      assertThat(rig.epoch(0)).isGreaterThan(epoch);
    }
  }

  /**
   * The engine restarts without a word ({@code /health} never fails): its event ids start again
   * with {@code created}, the replica starts a new epoch holding exactly the new process's blocks
   * (the alignment probe's, stored again after the restart, then a prompt's), none of the old
   * process's.
   */
  @Test
  void restart_clearsTheReplica_thenTheTrackerHoldsExactlyTheNewProcesssBlocks() throws Exception {
    try (Rig rig = new Rig(1, 256)) {
      int[] before = tokens(1000, 3, 5);
      rig.complete(before);
      rig.awaitExact(0);
      long epoch = rig.epoch(0);

      rig.engines.get(0).restart();
      rig.kit
          .createTestProbe()
          .awaitAssert(DEADLINE, () -> assertThat(rig.epoch(0)).isGreaterThan(epoch));
      rig.complete(tokens(4000, 2, 5));
      rig.awaitExact(0);
    }
  }

  private static ReplicaDigest digest(Iterable<int[]> prefixes) {
    return EngineRig.digestOf(MODEL, BS, prefixes);
  }

  /** {@code blocks} full blocks of token ids from {@code from} on, then {@code extra} more. */
  private static int[] tokens(int from, int blocks, int extra) {
    return IntStream.range(from, from + blocks * BS + extra).toArray();
  }
}
