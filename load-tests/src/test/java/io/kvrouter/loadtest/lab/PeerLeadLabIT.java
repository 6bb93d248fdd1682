package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.Workloads;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * One router, 8 replicas of 65,536 blocks, seed 1: kvrouter's p90 TTFT is at most each close peer's
 * and its hit rate within 0.005 of the highest, the README's "At a glance" lines. Only the peers
 * that come within 10 % of kvrouter's p90 on each workload run here (each costs seconds of the
 * suite; the others' p90 is 14 % or more above it); sglang-gsp is pinned in {@link
 * ColdLeadLabTest}.
 *
 * <p>A system test ({@code mvn verify -Psystem}): its replays of whole traces, on two threads, take
 * 13-15 s of a 2-core machine at load 2-5 and 93 s at load 12.
 */
@org.junit.jupiter.api.Timeout(300)
class PeerLeadLabIT {

  private static final double HIT_SLACK = 0.005;

  /**
   * The lab as the README's headline figures run it: 8 replicas of 65,536 blocks, {@code policies}.
   */
  static LabConfig headline(String... policies) {
    return LabConfig.defaults(8).withCapacity(65_536).withPolicies(List.of(policies));
  }

  private static LabResults run(String workload, String... peers) {
    List<String> policies = new ArrayList<>(List.of("kvrouter"));
    policies.addAll(List.of(peers));
    return PolicyLab.run(
        Workloads.byName(workload, Map.of(), 1), headline(policies.toArray(String[]::new)), 2, "t");
  }

  /**
   * Measured: kvrouter 54.8 ms / 0.9833; tgi_trie 55.5 / 0.9806, sglang_cache_aware 55.6 / 0.9833
   * (llmd_precise 56.2 / 0.9832, left out: sglang_cache_aware, as SMG routes since PR #2161, is
   * faster and caches as much; before that update it was the other way round).
   */
  @Test
  void llmdB2b_lowestP90_andTheHighestHitRate() {
    LabResults r = run("llmd-b2b", "tgi_trie", "sglang_cache_aware");
    assertLeads(r, "tgi_trie", "sglang_cache_aware");
  }

  /**
   * Measured: kvrouter 36.1 ms / 0.8371; tgi_trie 37.3 / 0.8035; sglang_cache_aware 41.1 / 0.8410
   * (it sends every conversation to the replica holding the shared system prompt).
   */
  @Test
  void multiTurnChat_lowestP90_hitRateWithinTheLine() {
    LabResults r = run("multi-turn-chat", "tgi_trie", "sglang_cache_aware");
    assertLeads(r, "tgi_trie", "sglang_cache_aware");
  }

  /**
   * Measured: kvrouter 525.4 ms / 0.5447; sglang_cache_aware 527.3 / 0.5493, llmd_precise 529.4 /
   * 0.5523, dynamo_kv 541.2 / 0.5039 (536.4 / 0.5118 before its ties went random). The hit-rate
   * line (within 0.005) is not met in this replay, only on the mean of 8 jittered draws (README,
   * "At a glance"); the p90 is, and the hit rate stays within 0.01.
   */
  @Test
  void mooncakeSynthetic_lowestP90() {
    List<String> peers = List.of("sglang_cache_aware", "llmd_precise", "dynamo_kv");
    LabResults r = run("mooncake-synthetic", peers.toArray(String[]::new));
    PolicyResult kv = r.policy("kvrouter");
    assertThat(kv.completed()).isEqualTo(3_993);
    for (String peer : peers) {
      assertThat(kv.ttft().p90())
          .as("p90 against " + peer)
          .isLessThanOrEqualTo(r.policy(peer).ttft().p90());
      assertThat(kv.hitRate())
          .as("hit rate against " + peer)
          .isGreaterThan(r.policy(peer).hitRate() - 0.01);
    }
  }

  /**
   * The conversation trace's first 2,000 requests at a tenth of its rate, spread over its ticks
   * (light load): every request opens with the same 512-token block. Before {@code coldMatchShare}
   * a replica that had not computed it looked slower for every request and never got one. Measured
   * (5 Dec 2026, {@code kvrouter lab --workload mooncake-conversation --limit 2000 --speed-up 0.1
   * --arrivals spread}): kvrouter 520.7 ms / 0.2624, every replica 220-269 decisions; with the
   * setting off 561.2 / 0.1591 and 4 replicas none; sglang_cache_aware 538.8 / 0.2528 (540.6 /
   * 0.2540 as SMG v1.9.0 was modelled before). The whole trace shows the same (457.8 / 0.2716
   * against 497.8 / 0.2005 with 3 replicas none, and 470.9 / 0.2700) in six times as long.
   */
  @Test
  void conversationAtATenthOfItsRate_usesEveryReplica_andCachesAsWellAsTheCacheGreedyPeer() {
    LabResults r =
        PolicyLab.run(
            Workloads.byName("mooncake-conversation", Map.of(), 1)
                .speedUp(0.1)
                .limit(2_000)
                .spreadOverTicks(1),
            headline("kvrouter", "sglang_cache_aware"),
            2,
            "t");
    PolicyResult kv = r.policy("kvrouter");
    PolicyResult sglang = r.policy("sglang_cache_aware");
    System.out.printf(
        "a tenth of the rate: kvrouter %.1f ms / %.4f %s, sglang_cache_aware %.1f / %.4f%n",
        kv.ttft().p90(),
        kv.hitRate(),
        java.util.Arrays.toString(kv.perReplicaDecisions()),
        sglang.ttft().p90(),
        sglang.hitRate());
    assertThat(java.util.Arrays.stream(kv.perReplicaDecisions()).min().orElse(0))
        .as("the fewest decisions any replica got")
        .isPositive();
    assertThat(kv.ttft().p90()).isLessThanOrEqualTo(sglang.ttft().p90());
    assertThat(kv.hitRate()).isGreaterThanOrEqualTo(sglang.hitRate() - HIT_SLACK);
  }

  private static void assertLeads(LabResults r, String... peers) {
    PolicyResult kv = r.policy("kvrouter");
    double best = 0;
    for (String peer : peers) {
      PolicyResult p = r.policy(peer);
      assertThat(kv.ttft().p90()).as("p90 against " + peer).isLessThanOrEqualTo(p.ttft().p90());
      best = Math.max(best, p.hitRate());
    }
    assertThat(kv.hitRate())
        .as("hit rate against the best peer's")
        .isGreaterThanOrEqualTo(best - HIT_SLACK);
  }
}
