package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import io.kvrouter.tracker.policy.Policies;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Guarded by a generous timeout: a replay that never ends is a bug (ticks must stop). */
@org.junit.jupiter.api.Timeout(300)
class LabSimulationTest {

  private static Workload traceSubset(int n) {
    return Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(n);
  }

  /** 16 groups of 16 prompts sharing a 2,048-token system prompt, all at once. */
  private static Workload sharedPrefixBurst() {
    return Workloads.byName("sglang-gsp", Map.of("groups", "16"), 1);
  }

  @Test
  void outDir_holdsResultsJsonWithEverySchemaField_reportAndCharts(@TempDir Path out)
      throws Exception {
    LabConfig config = LabConfig.defaults(4).withPolicies(List.of("kvrouter", "round_robin"));
    LabResults r = PolicyLab.run(traceSubset(300), config, 2, "kvrouter lab --test");
    PolicyLab.write(r, out);

    JsonNode root = new ObjectMapper().readTree(out.resolve("results.json").toFile());
    for (String field :
        List.of(
            "workload",
            "replicas",
            "routers",
            "capacity_blocks",
            "single_cache_hit_rate",
            "single_cache_block_hit_rate",
            "policies")) {
      assertThat(root.has(field)).as(field).isTrue();
    }
    assertThat(root.get("capacity_blocks").isNull()).isTrue();
    assertThat(root.get("replicas").asInt()).isEqualTo(4);
    assertThat(root.get("policies")).hasSize(2);
    for (JsonNode p : root.get("policies")) {
      for (String field :
          List.of(
              "policy",
              "hit_rate",
              "block_hit_rate",
              "ttft_ms",
              "e2e_ms",
              "throughput_rps",
              "load_max_over_mean",
              "decisions")) {
        assertThat(p.has(field)).as(field).isTrue();
      }
      for (String q : List.of("p50", "p90", "p99")) {
        assertThat(p.get("ttft_ms").get(q).asDouble()).isPositive();
      }
      assertThat(p.get("e2e_ms").get("p99").asDouble())
          .isGreaterThanOrEqualTo(p.get("e2e_ms").get("p50").asDouble());
      assertThat(p.get("decisions").asLong()).isEqualTo(300);
    }
    String report = Files.readString(out.resolve("report.md"));
    assertThat(report)
        .contains(
            "kvrouter lab --test",
            "| kvrouter |",
            "| round_robin |",
            "ttft_cdf.png",
            "load_kvrouter.png");
    for (String png : List.of("ttft_cdf.png", "load_kvrouter.png", "load_round_robin.png")) {
      byte[] head = Files.readAllBytes(out.resolve(png));
      assertThat(head[1]).isEqualTo((byte) 'P'); // \x89PNG
    }
  }

  @Test
  void capacityLimit_isWrittenAndMakesEvictionMatter() {
    Workload w = traceSubset(600);
    LabConfig base = LabConfig.defaults(4).withPolicies(List.of("kvrouter"));
    PolicyResult unlimited = PolicyLab.run(w, base, 1, "t").policy("kvrouter");
    LabResults limited = PolicyLab.run(w, base.withCapacity(9_000), 1, "t");
    assertThat(ResultsJson.toTree(limited).get("capacity_blocks").asLong()).isEqualTo(9_000);
    assertThat(limited.policy("kvrouter").hitRate()).isLessThan(unlimited.hitRate());
  }

  @Test
  void sameSeed_sameResults() {
    LabConfig config =
        LabConfig.defaults(4)
            .withRouters(2, 50_000)
            .withPolicies(List.of("kvrouter", "random", "dynamo_kv"))
            .withSeed(42);
    ObjectNode a = ResultsJson.toTree(PolicyLab.run(traceSubset(400), config, 2, "t"));
    ObjectNode b = ResultsJson.toTree(PolicyLab.run(traceSubset(400), config, 1, "t"));
    for (ObjectNode tree : List.of(a, b)) {
      tree.remove("wall_ms");
      tree.get("policies").forEach(p -> ((ObjectNode) p).remove(List.of("wall_ms", "cpu_ms")));
    }
    assertThat(a).isEqualTo(b);
  }

  @Test
  void severalRouters_withDelay_staleViewsLoseHits_butBaselinesNeverSeeTheirPeers() {
    Workload w = sharedPrefixBurst();
    LabConfig config =
        LabConfig.defaults(8)
            .withPolicies(List.of("kvrouter", "sglang_cache_aware"))
            .withChaos(-1, 0, 0, w.size());
    LabResults fresh = PolicyLab.run(w, config.withRouters(4, 0), 2, "t");
    LabResults stale = PolicyLab.run(w, config.withRouters(4, 200_000), 2, "t");
    // Without seeing each other's reservations, routers place a group on several replicas.
    assertThat(stale.policy("kvrouter").hitRate()).isLessThan(fresh.policy("kvrouter").hitRate());
    // SMG gateways never see each other's decisions: in a burst, before any engine event, a
    // fresh reservation plane changes nothing for them (with it, they would see each other's
    // in-flight counts).
    assertThat(stale.policy("sglang_cache_aware").perReplicaDecisions())
        .isEqualTo(fresh.policy("sglang_cache_aware").perReplicaDecisions());
    assertThat(stale.policy("sglang_cache_aware").hitRate())
        .isEqualTo(fresh.policy("sglang_cache_aware").hitRate());
  }

  @Test
  void globalScheduler_decidesEveryArrivalInOneInstance_howeverManyRouters() {
    Workload w = traceSubset(300);
    LabConfig config =
        LabConfig.defaults(4).withPolicies(List.of("preble_e2", "llmd_precise")).withSeed(3);
    LabResults one = PolicyLab.run(w, config.withRouters(1, 5_000), 1, "t");
    LabResults four = PolicyLab.run(w, config.withRouters(4, 5_000), 1, "t");
    for (String p : List.of("preble_e2", "llmd_precise")) {
      assertThat(four.policy(p).perReplicaDecisions())
          .as(p)
          .isEqualTo(one.policy(p).perReplicaDecisions());
      assertThat(four.policy(p).hitRate()).as(p).isEqualTo(one.policy(p).hitRate());
    }
  }

  @Test
  void engineMetrics_reachEachPolicyAtItsOwnRefreshInterval() {
    LabConfig config = LabConfig.defaults(2);
    assertThat(LabSimulation.reportMicros(config, Policies.visibility("llmd_precise")))
        .isEqualTo(50_000);
    assertThat(LabSimulation.reportMicros(config, Policies.visibility("kvrouter")))
        .isEqualTo(250_000);
    assertThat(
            LabSimulation.routerCount(config.withRouters(4, 0), Policies.visibility("preble_e2")))
        .isEqualTo(1);
    assertThat(
            LabSimulation.routerCount(config.withRouters(4, 0), Policies.visibility("dynamo_kv")))
        .isEqualTo(4);
  }

  @Test
  void burstThroughSeveralRouters_kvrouterNearTieRandomisation_balancesBetterThanGreedy() {
    Workload w = sharedPrefixBurst();
    LabConfig config =
        LabConfig.defaults(8)
            .withPolicies(List.of("kvrouter", "llmd_precise"))
            .withChaos(-1, 0, 0, w.size())
            .withRouters(4, 200_000);
    LabResults r = PolicyLab.run(w, config, 2, "t");
    System.out.printf(
        "burst, 4 routers, 200 ms: kvrouter %.3f, llmd_precise %.3f%n",
        r.policy("kvrouter").loadMaxOverMean(), r.policy("llmd_precise").loadMaxOverMean());
    assertThat(r.policy("kvrouter").loadMaxOverMean())
        .isLessThan(r.policy("llmd_precise").loadMaxOverMean());
  }

  @Test
  void killedReplica_getsNoFurtherDecisions_andEveryRequestCompletes() {
    Workload w = traceSubset(800);
    long killAt = w.get(400).arrivalMicros();
    LabConfig config =
        LabConfig.defaults(4)
            .withPolicies(List.of("kvrouter", "round_robin", "least_loaded", "sglang_cache_aware"))
            .withRouters(2, 10_000)
            .withChaos(2, killAt, 0, 0);
    LabResults r = PolicyLab.run(w, config, 2, "t");
    for (PolicyResult p : r.policies()) {
      assertThat(p.decisionsToKilledAfterKill()).as(p.policy()).isZero();
      assertThat(p.completed()).as(p.policy()).isEqualTo(800);
      assertThat(p.decisions()).as(p.policy()).isGreaterThanOrEqualTo(800);
      long[] d = p.perReplicaDecisions();
      assertThat(d[2]).as(p.policy()).isLessThan(Math.min(d[0], Math.min(d[1], d[3])));
    }
  }

  @Test
  void droppedEvents_routersLiveOnPredictions_andEveryRequestCompletes() {
    Workload w = traceSubset(500);
    LabConfig config =
        LabConfig.defaults(4)
            .withPolicies(List.of("kvrouter", "dynamo_kv"))
            .withChaos(-1, 0, 0.5, 0);
    LabResults r = PolicyLab.run(w, config, 2, "t");
    for (PolicyResult p : r.policies()) {
      assertThat(p.completed()).isEqualTo(500);
      assertThat(p.hitRate()).isPositive();
    }
  }
}
