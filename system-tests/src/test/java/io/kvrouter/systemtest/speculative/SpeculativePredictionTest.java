package io.kvrouter.systemtest.speculative;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.EngineKeyBridge;
import io.kvrouter.agent.TrackerRouterKeys;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.SpeculativeDecoding;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineCore;
import io.kvrouter.sim.SimRequest;
import io.kvrouter.sim.TimingModel;
import io.kvrouter.sim.VirtualTimeDriver;
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
 * An engine running EAGLE speculative decoding (the sim with vLLM's rule: hashes and events as
 * without it, the last matched block of a hit recomputed) through the agent's bridge into a tracker
 * whose replica is announced with the router's {@code kvrouter.models."m".speculative-method}:
 * repeated prompts still land on the replica that holds them, and the tracker predicts exactly the
 * cached tokens the engine then reports.
 */
class SpeculativePredictionTest {

  private static final String MODEL = "m";
  private static final TimingModel LINEAR =
      (prefill, decode, active, total) -> 1000 + 10L * prefill + 100L * decode;

  private static int[] prompt(int n, int offset) {
    return IntStream.range(0, n).map(i -> i + offset).toArray();
  }

  /** Runs {@code tokens} on the engine alone: the cached prompt tokens it reported. */
  private static int run(SimEngineCore core, String id, int[] tokens) {
    var arrival = new VirtualTimeDriver.TimedRequest(0, SimRequest.of(id, tokens, 1));
    return VirtualTimeDriver.run(core, List.of(arrival)).get(0).cachedPromptTokens();
  }

  /** A tracker of replica "e" (announced with {@code setting}) and an empty replica "cold". */
  private static KvTrackerCore tracker(String setting) {
    Config config = ConfigFactory.parseString("kvrouter.models.m.speculative-method = " + setting);
    EngineIdentity engine =
        new EngineIdentity("vllm", "sim", "sha256", 16)
            .withSpeculative(SpeculativeDecoding.forModel(config, MODEL));
    KvTrackerCore tracker = new KvTrackerCore(TrackerConfig.defaults("in-1"));
    for (String id : new String[] {"e", "cold"}) {
      tracker.replicaUp(
          new ReplicaInfo(id, 0, MODEL, "http://" + id, 16, List.of(Tier.GPU), "both", true, true)
              .with(
                  id.equals("e") ? engine : EngineIdentity.NOTHING_KNOWN, AlignmentStatus.ALIGNED));
    }
    return tracker;
  }

  private static SimEngineCore eagleEngine() {
    return new SimEngineCore(
        new SimEngineConfig(16, 64, 8, 8192, "0", LINEAR).withSpeculativeMethod("eagle"));
  }

  /**
   * Runs {@code first} on {@code engine}; a tracker (replica "e" announced with {@code setting})
   * that applied what the engine announced, through the agent's bridge.
   */
  private static KvTrackerCore trackerAfter(SimEngineCore engine, int[] first, String setting) {
    List<EngineEvent> events = new ArrayList<>();
    engine.setKvEventListener((e, at) -> events.addAll(e));
    run(engine, "first", first);
    KvTrackerCore tracker = tracker(setting);
    EngineKeyBridge bridge = new EngineKeyBridge(new TrackerRouterKeys(MODEL), 16, 1000);
    tracker.apply(new KvEventBatch("e", 1, 0, bridge.translate(events).toArray(KvEvent[]::new)));
    return tracker;
  }

  /** Routes {@code tokens}: the decision's candidate for the replica it chose. */
  private static Decision.Candidate route(KvTrackerCore tracker, String id, int[] tokens) {
    long[] keys = BlockKeys.of(MODEL, 16).keys(tokens);
    Decision d = tracker.selectAndReserve(new RouteRequest(id, MODEL, keys, tokens.length), 0);
    return d.ranked().stream()
        .filter(c -> c.replicaId().equals(d.chosen()))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void withTheRightSetting_repeatedPromptsHit_asTheEagleEngineReports() {
    SimEngineCore engine = eagleEngine();
    int[] a = prompt(100, 1000); // 6 full blocks
    KvTrackerCore tracker = trackerAfter(engine, a, "eagle");

    Decision.Candidate again = route(tracker, "a2", a);
    int reported = run(engine, "a2", a);
    assertThat(again.replicaId()).as("the repeated prompt lands where it is cached").isEqualTo("e");
    assertThat(reported).as("the engine still hits, one block short").isEqualTo(80);
    assertThat(again.cachedTokens()).isEqualTo(reported);

    int[] c = Arrays.copyOf(a, 110);
    System.arraycopy(prompt(40, 90_000), 0, c, 70, 40); // shares a's first 4 full blocks
    Decision.Candidate shared = route(tracker, "c", c);
    int reportedShared = run(engine, "c", c);
    assertThat(shared.replicaId()).isEqualTo("e");
    assertThat(reportedShared).isEqualTo(48);
    assertThat(shared.cachedTokens()).isEqualTo(reportedShared);
    System.out.printf(
        "eagle: router predicts %d and %d cached tokens, engine reports %d and %d%n",
        again.cachedTokens(), shared.cachedTokens(), reported, reportedShared);
  }

  @Test
  void withTheSettingWrong_theTrackerPredictsABlockTheEngineDoesNotReuse() {
    SimEngineCore engine = eagleEngine();
    int[] a = prompt(100, 1000);
    KvTrackerCore tracker = trackerAfter(engine, a, "none");

    Decision.Candidate again = route(tracker, "a2", a);
    int reported = run(engine, "a2", a);
    assertThat(again.cachedTokens())
        .as("why the alignment probe refuses this replica: the prediction is one block off")
        .isEqualTo(reported + 16);
  }
}
