package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineCore;
import io.kvrouter.sim.SimRequest;
import io.kvrouter.sim.VirtualTimeDriver;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The lab engine against the sim engine ({@code SimEngineCore} through its {@code
 * VirtualTimeDriver}) on the same requests: same cached tokens per request, TTFT and end-to-end
 * latency within the macro-pass approximation.
 */
class LabEngineTest {

  /**
   * One decode pass (about 6 ms): a macro pass times its decode term at the utilisation of its
   * start, so an arrival can fall on the other side of a pass boundary than in the sim.
   */
  private static final double ONE_PASS = 7_000;

  private record Outcome(int cached, long firstToken, long finish) {}

  private static Workload workload() {
    return workload("6");
  }

  /** Six groups of eight prompts sharing a 1,024-token system prompt, at {@code qps}. */
  private static Workload workload(String qps) {
    return Workloads.byName(
        "sglang-gsp",
        Map.of(
            "groups",
            "6",
            "promptsPerGroup",
            "8",
            "systemTokens",
            "1024",
            "questionTokens",
            "100",
            "outputTokens",
            "40",
            "qps",
            qps),
        3);
  }

  private static Map<Integer, Outcome> sim(Workload w, int blocks) {
    SimEngineCore core = new SimEngineCore(SimEngineConfig.defaults().withNumBlocks(blocks));
    List<VirtualTimeDriver.TimedRequest> arrivals = new ArrayList<>();
    for (int i = 0; i < w.size(); i++) {
      arrivals.add(
          new VirtualTimeDriver.TimedRequest(
              w.get(i).arrivalMicros(),
              SimRequest.of(
                  Integer.toString(i), w.get(i).promptTokenIds(), w.get(i).outputLength())));
    }
    Map<Integer, Outcome> out = new HashMap<>();
    for (VirtualTimeDriver.RequestResult r : VirtualTimeDriver.run(core, arrivals)) {
      out.put(
          Integer.parseInt(r.requestId()),
          new Outcome(r.cachedPromptTokens(), r.firstTokenMicros(), r.finishMicros()));
    }
    return out;
  }

  private static Map<Integer, Outcome> lab(Workload w, int blocks) {
    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, 16);
    Map<Integer, Outcome> out = new HashMap<>();
    Map<Integer, Long> first = new HashMap<>();
    LabEngine engine =
        new LabEngine(
            0,
            "r0",
            16,
            blocks,
            256,
            8192,
            0,
            0,
            new LabEngine.Listener() {
              @Override
              public void firstToken(LabEngine e, LabSequence s, long t) {
                first.put(s.requestIndex, t);
              }

              @Override
              public void finished(LabEngine e, LabSequence s, long t) {
                out.put(
                    s.requestIndex,
                    new Outcome(s.cachedPromptTokens, first.get(s.requestIndex), t));
              }
            });
    LabEngineDrive.run(w, keys::of, engine, (t, b) -> {});
    return out;
  }

  @Test
  void ampleCapacity_sameCachedTokensAsTheSimEngine_andTheSameLatencies() {
    Workload w = workload();
    Map<Integer, Outcome> sim = sim(w, 50_000);
    Map<Integer, Outcome> lab = lab(w, 50_000);
    assertThat(lab).hasSameSizeAs(sim).hasSize(w.size());
    long hits = 0;
    int close = 0;
    double simTtft = 0;
    double labTtft = 0;
    double simE2e = 0;
    double labE2e = 0;
    for (int i = 0; i < w.size(); i++) {
      Outcome s = sim.get(i);
      Outcome l = lab.get(i);
      long arrival = w.get(i).arrivalMicros();
      assertThat(l.cached()).as("cached tokens of %d", i).isEqualTo(s.cached());
      double st = s.firstToken() - arrival;
      double se = s.finish() - arrival;
      simTtft += st;
      labTtft += l.firstToken() - arrival;
      simE2e += se;
      labE2e += l.finish() - arrival;
      if (Math.abs(l.firstToken() - arrival - st) <= 0.01 * st + ONE_PASS
          && Math.abs(l.finish() - arrival - se) <= 0.01 * se + ONE_PASS) {
        close++;
      }
      hits += l.cached();
    }
    System.out.printf(
        "sim vs lab engine: mean TTFT %.1f/%.1f ms, mean e2e %.1f/%.1f ms, %d of %d"
            + " requests within 1%% + one pass%n",
        simTtft / w.size() / 1000,
        labTtft / w.size() / 1000,
        simE2e / w.size() / 1000,
        labE2e / w.size() / 1000,
        close,
        w.size());
    assertThat(labTtft).isCloseTo(simTtft, within(0.02 * simTtft));
    assertThat(labE2e).isCloseTo(simE2e, within(0.02 * simE2e));
    assertThat(close).isGreaterThanOrEqualTo(w.size() * 9 / 10);
    assertThat(hits).isPositive();
  }

  /**
   * All 48 at once: the first passes admit several prompts of one group together, and the later
   * ones hit the blocks the first is computing in that pass (vLLM v1 caches blocks when it
   * schedules them), in the lab engine as in the sim.
   */
  @Test
  void burst_sameCachedTokensAsTheSimEngine_includingHitsWithinOnePass() {
    Workload w = workload("inf");
    Map<Integer, Outcome> sim = sim(w, 50_000);
    Map<Integer, Outcome> lab = lab(w, 50_000);
    assertThat(lab).hasSameSizeAs(sim).hasSize(w.size());
    long firstPassHits = 0;
    for (int i = 0; i < w.size(); i++) {
      assertThat(lab.get(i).cached()).as("cached tokens of %d", i).isEqualTo(sim.get(i).cached());
      assertThat(lab.get(i).firstToken())
          .as("first token of %d", i)
          .isEqualTo(sim.get(i).firstToken());
      if (sim.get(i).firstToken() == firstTokenOfFirstPass(sim) && sim.get(i).cached() > 0) {
        firstPassHits++;
      }
    }
    assertThat(firstPassHits)
        .as("requests hitting a prompt computed in the same pass")
        .isPositive();
  }

  private static long firstTokenOfFirstPass(Map<Integer, Outcome> outcomes) {
    return outcomes.values().stream().mapToLong(Outcome::firstToken).min().orElseThrow();
  }

  @Test
  void scarceCapacity_evictsAndStillHitsAboutAsOftenAsTheSimEngine() {
    Workload w = workload();
    int blocks = 300; // about four groups' system prompts: eviction matters
    Map<Integer, Outcome> sim = sim(w, blocks);
    Map<Integer, Outcome> lab = lab(w, blocks);
    long simHits = sim.values().stream().mapToLong(Outcome::cached).sum();
    long labHits = lab.values().stream().mapToLong(Outcome::cached).sum();
    System.out.println("cached tokens at 300 blocks: sim " + simHits + ", lab " + labHits);
    assertThat(lab).hasSize(w.size());
    assertThat(simHits).as("the scarce cache still hits").isPositive();
    assertThat((double) labHits).isCloseTo(simHits, within(0.05 * simHits));
  }
}
