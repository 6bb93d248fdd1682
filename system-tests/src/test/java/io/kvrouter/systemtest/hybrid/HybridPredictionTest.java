package io.kvrouter.systemtest.hybrid;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.agent.EngineKeyBridge;
import io.kvrouter.agent.TrackerRouterKeys;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineCore;
import io.kvrouter.sim.SimRequest;
import io.kvrouter.sim.StepResult;
import io.kvrouter.sim.TimingModel;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.TrackerConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A hybrid engine (full-attention group 0, 33-token sliding-window group 1) through the agent's
 * bridge into a tracker: after the window group dropped the blocks a prompt's shared prefix needs,
 * the router predicts exactly the cached tokens the engine then reports, though the full-attention
 * group still holds the prefix.
 */
class HybridPredictionTest {

  private static final String MODEL = "m";
  private static final TimingModel LINEAR =
      (prefill, decode, active, total) -> 1000 + 10L * prefill + 100L * decode;

  private static int[] prompt(int n, int offset) {
    return IntStream.range(0, n).map(i -> i + offset).toArray();
  }

  private static int run(SimEngineCore core, String id, int[] tokens) {
    core.submit(SimRequest.of(id, tokens, 1), 0);
    int cached = -1;
    long now = 0;
    for (int guard = 0; core.hasWork() && guard < 100_000; guard++) {
      StepResult r = core.step(now);
      for (var e : r.emissions()) {
        cached = e.cachedPromptTokens();
      }
      now = r.endMicros();
    }
    return cached;
  }

  @Test
  void routerPredictsTheCachedTokensAHybridEngineReports() {
    SimEngineCore engine =
        new SimEngineCore(new SimEngineConfig(16, 32, 8, 8192, "0", LINEAR).withSlidingWindow(33));
    List<EngineEvent> events = new ArrayList<>();
    engine.setKvEventListener((e, at) -> events.addAll(e));
    int[] a = prompt(200, 1000);
    run(engine, "a", a);
    run(engine, "b", prompt(408, 50_000)); // the window group drops a's head, group 0 a's tail
    int[] c = Arrays.copyOf(a, 136);
    System.arraycopy(prompt(40, 90_000), 0, c, 96, 40); // shares a's first 6 blocks

    EngineKeyBridge bridge = new EngineKeyBridge(new TrackerRouterKeys(MODEL), 16, 1000);
    KvTrackerCore tracker = new KvTrackerCore(TrackerConfig.defaults("in-1"));
    tracker.replicaUp(
        new ReplicaInfo("e", 0, MODEL, "http://e", 16, List.of(Tier.GPU), "both", true, true));
    tracker.apply(new KvEventBatch("e", 1, 0, bridge.translate(events).toArray(KvEvent[]::new)));

    long[] keys = BlockKeys.of(MODEL, 16).keys(c);
    assertThat(tracker.matchedBlocks(keys)).containsEntry("e", 6); // the full-attention match
    Decision d = tracker.selectAndReserve(new RouteRequest("c", MODEL, keys, c.length), 0);
    Decision.Candidate e = d.ranked().get(0);
    int reported = run(engine, "c", c);

    System.out.printf(
        "hybrid: router predicts %d cached tokens (%s hit), engine reports %d%n",
        e.cachedTokens(), e.hit(), reported);
    assertThat(e.hit()).isEqualTo("partial");
    assertThat(e.cachedTokens()).isEqualTo(reported);
  }
}
