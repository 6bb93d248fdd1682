package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.Tier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The lab engine's CPU tier: a prompt the GPU evicted is loaded back from the CPU tier (cached
 * tokens, CPU hits), the pass that loads it takes the load time per block longer, and the tier's
 * stores and removals are published with {@link Tier#CPU}; the tier alone is an LRU.
 */
class LabCpuTierTest {

  private static final long[] A = {11, 12, 13, 14};
  private static final long[] B = {21, 22, 23, 24};

  private record Run(Map<String, Long> firstToken, Map<String, Integer> cached, List<KvEvent> ev) {}

  /**
   * Serves A, then B (which evicts all of A from a 5-block GPU cache), then A again, one at a time.
   */
  private static Run serve(long cpuBlocks, long loadMicros) {
    Map<String, Long> first = new HashMap<>();
    Map<String, Integer> cached = new HashMap<>();
    LabEngine engine =
        new LabEngine(
            0,
            "r0",
            16,
            5,
            256,
            8192,
            cpuBlocks,
            loadMicros,
            new LabEngine.Listener() {
              @Override
              public void firstToken(LabEngine e, LabSequence s, long t) {
                first.put(s.requestId, t - s.arrivalMicros);
              }

              @Override
              public void finished(LabEngine e, LabSequence s, long t) {
                cached.put(s.requestId, s.cachedPromptTokens);
              }
            });
    List<KvEvent> events = new ArrayList<>();
    long now = 0;
    int i = 0;
    for (long[] keys : new long[][] {A, B, A}) {
      engine.submit(new LabSequence(i, "q" + i++, 0, keys, 65, 2, now));
      while (engine.hasWork()) {
        now = engine.startPass(now);
        KvEventBatch b = engine.completePass();
        if (b != null) {
          events.addAll(List.of(b.events()));
        }
      }
    }
    return new Run(first, cached, events);
  }

  @Test
  void anEvictedPromptIsLoadedBackFromTheCpuTierChargingTheTransfer() {
    Run off = serve(0, 0);
    Run free = serve(64, 0);
    Run charged = serve(64, 500);

    assertThat(off.cached().get("q2")).isZero();
    assertThat(free.cached().get("q2")).isEqualTo(64);
    assertThat(charged.cached().get("q2")).isEqualTo(64);
    // Loaded, not computed: one prefill token instead of 65, plus 4 blocks × 500 µs.
    assertThat(free.firstToken().get("q2")).isLessThan(off.firstToken().get("q2"));
    assertThat(charged.firstToken().get("q2") - free.firstToken().get("q2")).isEqualTo(4 * 500);
  }

  @Test
  void theTierPublishesItsStoresAndRemovalsWithMediumCpu() {
    Run run = serve(4, 100);
    List<Long> cpuStored = new ArrayList<>();
    int cpuRemoved = 0;
    int gpuRemoved = 0;
    for (KvEvent e : run.ev()) {
      if (e instanceof BlocksStored s && s.tier() == Tier.CPU) {
        for (long k : s.blockKeys()) {
          cpuStored.add(k);
        }
      } else if (e instanceof BlocksRemoved r) {
        if (r.tier() == Tier.CPU) {
          cpuRemoved += r.engineHashes().length;
        } else {
          gpuRemoved += r.engineHashes().length;
        }
      }
    }
    // A's four blocks, then B's four, which push A's out of a 4-block tier; A again is a miss on
    // both tiers and is stored once more.
    assertThat(cpuStored)
        .containsExactly(11L, 12L, 13L, 14L, 21L, 22L, 23L, 24L, 11L, 12L, 13L, 14L);
    assertThat(cpuRemoved).isEqualTo(8);
    assertThat(gpuRemoved).isPositive();
    assertThat(run.cached().get("q2")).isZero();
  }

  @Test
  void leastRecentlyUsedBlocksLeaveFirstAndALoadTouches() {
    List<Long> removed = new ArrayList<>();
    LabCpuTier tier =
        new LabCpuTier(
            3,
            new LabCpuTier.Sink() {
              @Override
              public void stored(long[] keys, int from, int to) {}

              @Override
              public void removed(long key) {
                removed.add(key);
              }
            });
    tier.offload(new long[] {1, 2, 3}, 0, 3);
    assertThat(tier.loadableRun(new long[] {1, 9}, 0, 2)).isEqualTo(1);
    tier.offload(new long[] {4}, 0, 1);
    assertThat(removed).containsExactly(2L);
    assertThat(tier.loadableRun(new long[] {1, 2, 3}, 0, 3)).isEqualTo(1);
    assertThat(tier.contains(3)).isTrue();
    assertThat(tier.size()).isEqualTo(3);
  }

  /**
   * Through the whole lab: engines with a CPU tier under a GPU cache too small to keep
   * conversations, the routers index both tiers, and kvrouter reloads a good part of its hits from
   * CPU; the report shows the split.
   */
  @Test
  void inTheLab_kvrouterReloadsEvictedConversationsFromCpu() {
    io.kvrouter.loadtest.workload.Workload w =
        io.kvrouter.loadtest.workload.Workloads.bundled(
                io.kvrouter.loadtest.workload.Workloads.MOONCAKE_CONVERSATION, 0L)
            .limit(400);
    LabConfig config =
        LabConfig.defaults(4)
            .withPolicies(List.of("kvrouter"))
            .withCapacity(16384)
            .withCpuTier(65536, LabConfig.defaultCpuLoadMicros(16));
    LabResults r = PolicyLab.run(w, config, 1, "kvrouter lab --test");
    PolicyResult p = r.policies().get(0);
    assertThat(p.cpuHitRate()).isGreaterThan(0.05);
    assertThat(p.hitRate()).isGreaterThan(p.cpuHitRate());
    assertThat(LabReport.render(r, List.of())).contains("| policy | hit_rate GPU | hit_rate CPU |");
  }
}
