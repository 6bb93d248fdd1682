package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.TrackerConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The tracker shows a baseline only what its peer sees, and tells it its own requests' lives. */
class BaselineVisibilityTest {

  private static final String MODEL = "m";
  private static final BlockKeys KEYS = BlockKeys.of(MODEL, 16);

  private static ReplicaInfo replica(String id, boolean kvEvents) {
    return new ReplicaInfo(
        id, 0, MODEL, "http://" + id, 16, List.of(Tier.GPU), "both", kvEvents, true);
  }

  private static int[] tokens(int n, int salt) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = salt * 100_000 + i;
    }
    return t;
  }

  private static KvTrackerCore tracker(String policy, long seed, boolean kvEvents) {
    TrackerConfig base = TrackerConfig.defaults("in-1").withPolicy(policy);
    KvTrackerCore t =
        new KvTrackerCore(
            new TrackerConfig(
                base.ingressId(),
                base.policy(),
                base.busy(),
                seed,
                base.leaseMillis(),
                base.predictedTtlMillis(),
                base.approximateTtlMillis(),
                base.expectedBlocks()));
    t.replicaUp(replica("a", kvEvents));
    t.replicaUp(replica("b", kvEvents));
    return t;
  }

  @Test
  void withoutPredictedBlocks_aDecisionAddsNothingToTheIndex_untilTheEngineConfirms() {
    long[] prompt = KEYS.keys(tokens(160, 1));
    KvTrackerCore dynamo = tracker("dynamo_kv", 1, true);
    dynamo.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 160), 1_000);
    assertThat(dynamo.matchedBlocks(prompt)).isEmpty();

    KvTrackerCore kvrouter = tracker("kvrouter", 1, true);
    Decision d = kvrouter.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 160), 1_000);
    assertThat(kvrouter.matchedBlocks(prompt)).containsEntry(d.chosen(), 10);
  }

  @Test
  void replicasWithoutKvEvents_arePredictedForEveryPolicy_asDynamosApproximateIndexer() {
    long[] prompt = KEYS.keys(tokens(160, 1));
    KvTrackerCore dynamo = tracker("dynamo_kv", 1, false);
    Decision d = dynamo.selectAndReserve(new RouteRequest("q1", MODEL, prompt, 160), 1_000);
    assertThat(dynamo.matchedBlocks(prompt)).containsEntry(d.chosen(), 10);
  }

  /**
   * Dynamo keeps a request's blocks active until it is released, not only until its prefill: with
   * request A decoding on one replica, an unrelated request B costs 30 more active blocks there, so
   * it always goes to the other replica. Without the lifecycle calls the two would tie.
   */
  @Test
  void ownRequests_reachThePolicy_fromReservationToRelease() {
    for (long seed = 0; seed < 10; seed++) {
      KvTrackerCore t = tracker("dynamo_kv", seed, true);
      long[] a = KEYS.keys(tokens(480, 1));
      long[] b = KEYS.keys(tokens(480, 2));
      String first = t.selectAndReserve(new RouteRequest("A", MODEL, a, 480), 1_000).chosen();
      t.prefillCompleted("A", 1_100);
      String second = t.selectAndReserve(new RouteRequest("B", MODEL, b, 480), 1_200).chosen();
      assertThat(second).as("seed %d", seed).isNotEqualTo(first);
      t.released("A", 1_300);
      t.released("B", 1_300);
    }
  }
}
