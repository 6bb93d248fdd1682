package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.sim.Emission;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineCore;
import io.kvrouter.sim.SimRequest;
import io.kvrouter.sim.StepResult;
import io.kvrouter.sim.TimingModel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SimEngineCoreTest {

  /** 1 ms per pass, 10 µs per prefill token, 100 µs per decoding request. */
  private static final TimingModel LINEAR =
      (prefill, decode, active, total) -> 1000 + 10L * prefill + 100L * decode;

  private static SimEngineConfig config(int blocks, int seqs, int batched) {
    return new SimEngineConfig(16, blocks, seqs, batched, "0", LINEAR);
  }

  private static int[] prompt(int n, int offset) {
    return IntStream.range(0, n).map(i -> i + offset).toArray();
  }

  /** Runs in virtual time until idle; returns all emissions. */
  private static List<Emission> runToIdle(SimEngineCore core, long start) {
    List<Emission> out = new ArrayList<>();
    long now = start;
    for (int guard = 0; core.hasWork() && guard < 100_000; guard++) {
      StepResult r = core.step(now);
      out.addAll(r.emissions());
      now = r.endMicros();
    }
    return out;
  }

  @Test
  void samePromptTwice_secondHitsAllFullBlocksButTheLastToken() {
    SimEngineCore core = new SimEngineCore(config(64, 8, 8192));
    core.submit(SimRequest.of("a", prompt(40, 100), 1), 0);
    runToIdle(core, 0);
    core.submit(SimRequest.of("b", prompt(40, 100), 1), 10_000);
    List<Emission> b = runToIdle(core, 10_000);
    assertThat(b.get(0).cachedPromptTokens()).isEqualTo(32);
    // prompt of exactly two blocks: vLLM computes the last token, so only one block can hit
    core.submit(SimRequest.of("c", prompt(32, 100), 1), 20_000);
    assertThat(runToIdle(core, 20_000).get(0).cachedPromptTokens()).isEqualTo(16);
    assertThat(core.prefixCacheQueries()).isEqualTo(112);
    assertThat(core.prefixCacheHits()).isEqualTo(48);
  }

  /**
   * vLLM v1 caches a request's full blocks when it schedules them, before the forward pass ({@code
   * KVCacheManager.allocate_slots}), so a request admitted later in the same pass hits them: the
   * second of two identical prompts arriving together computes only its last block, the pass is
   * charged the first prompt's 40 tokens and the second's 8, and the blocks are announced once.
   */
  @Test
  void samePromptInOnePass_secondHitsTheBlocksTheFirstIsComputing() {
    SimEngineCore core = new SimEngineCore(config(64, 8, 8192));
    List<EngineEvent> events = new ArrayList<>();
    core.setKvEventListener((batch, end) -> events.addAll(batch));
    core.submit(SimRequest.of("a", prompt(40, 100), 1), 0);
    core.submit(SimRequest.of("b", prompt(40, 100), 1), 0);
    StepResult pass = core.step(0);
    assertThat(pass.emissions())
        .extracting(Emission::cachedPromptTokens)
        .containsExactlyInAnyOrder(0, 32);
    assertThat(pass.endMicros()).isEqualTo(1000 + 10L * (40 + 8) + 100L * 0);
    assertThat(core.prefixCacheHits()).isEqualTo(32);
    long stored =
        events.stream()
            .filter(e -> e instanceof EngineEvent.BlockStored)
            .mapToLong(e -> ((EngineEvent.BlockStored) e).blockHashes().length)
            .sum();
    assertThat(stored).isEqualTo(2);
  }

  @Test
  void differentPrefix_misses() {
    SimEngineCore core = new SimEngineCore(config(64, 8, 8192));
    core.submit(SimRequest.of("a", prompt(40, 100), 1), 0);
    runToIdle(core, 0);
    core.submit(SimRequest.of("b", prompt(40, 101), 1), 0);
    assertThat(runToIdle(core, 0).get(0).cachedPromptTokens()).isZero();
  }

  @Test
  void chunkedPrefill_splitsThePromptAndTimesEachPassInVirtualTime() {
    SimEngineCore core = new SimEngineCore(config(64, 8, 16));
    core.submit(SimRequest.of("a", prompt(40, 0), 2), 0);
    StepResult p1 = core.step(0);
    assertThat(p1.prefillTokens()).isEqualTo(16);
    assertThat(p1.emissions()).isEmpty();
    StepResult p2 = core.step(p1.endMicros());
    assertThat(p2.prefillTokens()).isEqualTo(16);
    StepResult p3 = core.step(p2.endMicros());
    assertThat(p3.prefillTokens()).isEqualTo(8);
    assertThat(p3.emissions())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.first()).isTrue();
              assertThat(e.timeMicros() - e.arrivalMicros()).isEqualTo(1160 + 1160 + 1080);
            });
    StepResult p4 = core.step(p3.endMicros());
    assertThat(p4.decodeTokens()).isEqualTo(1);
    assertThat(p4.durationMicros()).isEqualTo(1100);
    assertThat(p4.emissions()).singleElement().satisfies(e -> assertThat(e.finished()).isTrue());
    assertThat(core.hasWork()).isFalse();
  }

  @Test
  void runningRequestsDecodeFirst_thenWaitingOnesPrefillWithTheRestOfTheBudget() {
    SimEngineCore core = new SimEngineCore(config(64, 8, 20));
    core.submit(SimRequest.of("a", prompt(10, 0), 3), 0);
    StepResult p1 = core.step(0);
    assertThat(p1.emissions()).hasSize(1);
    core.submit(SimRequest.of("b", prompt(40, 500), 1), p1.endMicros());
    StepResult p2 = core.step(p1.endMicros());
    assertThat(p2.decodeTokens()).isEqualTo(1);
    assertThat(p2.prefillTokens()).isEqualTo(19);
    assertThat(p2.durationMicros()).isEqualTo(1000 + 190 + 100);
  }

  @Test
  void fullCache_preemptsTheLatestRequest_whichLaterRecomputesWhatWasEvicted() {
    // 4 blocks of 16: A and B (16-token prompts, 20 outputs) each grow to 3 blocks
    SimEngineCore core = new SimEngineCore(config(4, 8, 8192));
    core.submit(SimRequest.of("a", prompt(16, 0), 20), 0);
    core.submit(SimRequest.of("b", prompt(16, 500), 20), 0);
    List<Emission> all = new ArrayList<>();
    List<Integer> prefills = new ArrayList<>();
    long now = 0;
    for (int guard = 0; core.hasWork() && guard < 1000; guard++) {
      StepResult r = core.step(now);
      all.addAll(r.emissions());
      prefills.add(r.prefillTokens());
      now = r.endMicros();
    }
    assertThat(core.preemptions()).isEqualTo(1);
    // B held 33 tokens when preempted; its first block survived in the free queue, its second
    // was reallocated to A, so B recomputes 33 − 16 = 17 tokens once A is done
    assertThat(prefills).contains(17);
    for (String id : List.of("a", "b")) {
      assertThat(all.stream().filter(e -> e.requestId().equals(id)).map(Emission::index))
          .containsExactlyElementsOf(IntStream.range(0, 20).boxed().toList());
    }
    Emission lastA =
        all.stream()
            .filter(e -> e.requestId().equals("a") && e.finished())
            .findFirst()
            .orElseThrow();
    Emission firstResumedB =
        all.stream()
            .filter(e -> e.requestId().equals("b") && e.index() == 17)
            .findFirst()
            .orElseThrow();
    assertThat(firstResumedB.timeMicros()).isGreaterThan(lastA.timeMicros());
    assertThat(firstResumedB.cachedPromptTokens()).as("the first admission's figure").isZero();
  }

  @Test
  void maxNumSeqs_limitsAdmission() {
    SimEngineCore core = new SimEngineCore(config(64, 2, 8192));
    for (int i = 0; i < 3; i++) {
      core.submit(SimRequest.of("r" + i, prompt(5, i * 10), 4), 0);
    }
    core.step(0);
    assertThat(core.runningCount()).isEqualTo(2);
    assertThat(core.waitingCount()).isEqualTo(1);
  }

  @Test
  void mockerPolynomial_matchesThePublishedCoefficients() {
    assertThat(MockerTimingModel.prefillMillis(0)).isZero();
    assertThat(MockerTimingModel.prefillMillis(1000)).isCloseTo(32.1058589, within());
    assertThat(MockerTimingModel.decodeMillis(0)).isCloseTo(5.74, within());
    assertThat(MockerTimingModel.decodeMillis(1)).isCloseTo(34.01, within());
    assertThat(new MockerTimingModel(2.0).passMicros(1000, 1, 0, 100))
        .isEqualTo(Math.round((32.1058589 + 5.74) * 1000 / 2));
  }

  private static org.assertj.core.data.Offset<Double> within() {
    return org.assertj.core.data.Offset.offset(1e-6);
  }

  @Test
  void oversizedRequest_isRejected() {
    SimEngineCore core = new SimEngineCore(config(4, 8, 8192));
    assertThatThrownBy(() -> core.submit(SimRequest.of("x", prompt(60, 0), 10), 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("64 tokens");
  }

  @Test
  void kvEvents_describeExactlyTheCachedBlocks_underEvictionAndPreemption() {
    SimEngineCore core = new SimEngineCore(config(24, 6, 64));
    Set<Long> model = new HashSet<>();
    core.setKvEventListener((events, at) -> apply(model, events));
    Random rnd = new Random(42);
    long now = 0;
    for (int i = 0; i < 300; i++) {
      int len = 1 + rnd.nextInt(120);
      core.submit(
          SimRequest.of("r" + i, prompt(len, 1000 * rnd.nextInt(6)), 1 + rnd.nextInt(40)), now);
      for (int k = 0; k < 3 && core.hasWork(); k++) {
        now = core.step(now).endMicros();
      }
    }
    runToIdle(core, now);
    assertThat(model)
        .as("blocks stay cached after their requests end")
        .isNotEmpty()
        .containsExactlyInAnyOrderElementsOf(toSet(core.cachedBlockHashes()));
    assertThat(core.finishedRequests()).isEqualTo(300);
    assertThat(core.preemptions()).as("the workload overflows the cache").isPositive();
    assertThat(core.kvCacheUsage()).isZero();
  }

  private static void apply(Set<Long> model, List<EngineEvent> events) {
    for (EngineEvent e : events) {
      if (e instanceof EngineEvent.BlockStored s) {
        for (long h : s.blockHashes()) {
          assertThat(model.add(h)).as("stored twice").isTrue();
        }
      } else if (e instanceof EngineEvent.BlockRemoved r) {
        for (long h : r.blockHashes()) {
          assertThat(model.remove(h)).as("removed unknown").isTrue();
        }
      } else {
        model.clear();
      }
    }
  }

  private static Set<Long> toSet(long[] a) {
    Set<Long> s = new HashSet<>();
    for (long v : a) {
      s.add(v);
    }
    return s;
  }

  @Test
  void saltedAndLoraRequests_publishTheirExtraKeys_soTheAgentKeysThemAsTheIngressDoes() {
    SimEngineCore core = new SimEngineCore(config(64, 8, 8192));
    List<EngineEvent> events = new ArrayList<>();
    core.setKvEventListener((batch, end) -> events.addAll(batch));
    int[] tokens = prompt(40, 100);
    core.submit(new SimRequest("a", tokens, 1, null, "tenant-a"), 0);
    runToIdle(core, 0);
    core.submit(new SimRequest("b", tokens, 1, null, "tenant-b"), 10_000);
    core.submit(new SimRequest("c", tokens, 1, "sql-lora", null), 10_000);
    List<Emission> later = runToIdle(core, 10_000);
    assertThat(later).allSatisfy(e -> assertThat(e.cachedPromptTokens()).isZero());
    EngineKeyBridge bridge = new EngineKeyBridge(new TrackerRouterKeys("m"), 16, 100);
    Set<Long> stored = new HashSet<>();
    for (var e : bridge.translate(events)) {
      if (e instanceof BlocksStored s) {
        for (long k : s.blockKeys()) {
          stored.add(k);
        }
      }
    }
    var keys = BlockKeys.of("m", 16);
    List<Long> expected = new ArrayList<>();
    for (var extras :
        List.of(
            ExtraKeys.of(null, "tenant-a"),
            ExtraKeys.of(null, "tenant-b"),
            ExtraKeys.of("sql-lora", null))) {
      for (long k : keys.keys(tokens, extras)) {
        expected.add(k);
      }
    }
    assertThat(stored).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(bridge.unresolved()).isZero();
  }

  @Test
  void blocksEvictedFromGpu_areLoadedBackFromTheCpuTier_reportedCached_andChargedTheirTransfer() {
    SimEngineCore core = new SimEngineCore(config(8, 8, 8192).withCpuTier(64, 500));
    List<EngineEvent> events = new ArrayList<>();
    core.setKvEventListener((batch, end) -> events.addAll(batch));
    int[] a = prompt(65, 100); // four full blocks
    core.submit(SimRequest.of("a", a, 1), 0);
    runToIdle(core, 0);
    core.submit(SimRequest.of("b", prompt(97, 900), 1), 10_000);
    runToIdle(core, 10_000);
    // b's seven blocks evicted some of a's (vLLM's free-queue order decides which)
    long[] aHashes = core.blockHashes(a, null, null);
    Set<Long> onGpu = new HashSet<>();
    for (long h : core.cachedBlockHashes()) {
      onGpu.add(h);
    }
    int gpuRun = 0;
    while (gpuRun < 4 && onGpu.contains(aHashes[gpuRun])) {
      gpuRun++;
    }
    assertThat(gpuRun).as("a's leading blocks still on GPU").isLessThan(4);
    core.submit(SimRequest.of("a2", a, 1), 20_000);
    StepResult pass = core.step(20_000);
    assertThat(pass.emissions().get(0).cachedPromptTokens()).isEqualTo(64);
    assertThat(core.cpuLoadedBlocks()).isEqualTo(4 - gpuRun);
    // one token to prefill; the blocks loaded back cost 500 µs each
    assertThat(pass.durationMicros())
        .isEqualTo(LINEAR.passMicros(1, 0, 5, 8) + (4 - gpuRun) * 500L);
    // the agent sees the offload as CPU-tier blocks under the keys of their GPU store
    EngineKeyBridge bridge = new EngineKeyBridge(new TrackerRouterKeys("m"), 16, 100);
    List<Long> cpuKeys = new ArrayList<>();
    for (var e : bridge.translate(events)) {
      if (e instanceof BlocksStored s && s.tier() == io.kvrouter.protocol.Tier.CPU) {
        for (long k : s.blockKeys()) {
          cpuKeys.add(k);
        }
      }
    }
    long[] keys = BlockKeys.of("m", 16).keys(java.util.Arrays.copyOf(a, 64));
    assertThat(cpuKeys).contains(keys[0], keys[1], keys[2], keys[3]);
    assertThat(bridge.unresolved()).isZero();
  }
}
