package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.replica;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NearTieTest {

  static Set<String> firstChoices(TrackerConfig config) {
    Set<String> chosen = new HashSet<>();
    for (int router = 0; router < 20; router++) {
      // Twenty routers on the same (empty) state each place one request.
      KvTrackerCore t =
          new KvTrackerCore(
              new TrackerConfig(
                  "in-" + router,
                  config.policy(),
                  config.busy(),
                  config.seed(),
                  config.leaseMillis(),
                  config.predictedTtlMillis(),
                  config.approximateTtlMillis(),
                  config.expectedBlocks()));
      for (String r : new String[] {"a", "b", "c", "d"}) {
        t.replicaUp(replica(r, true));
      }
      chosen.add(t.selectAndReserve(new RouteRequest("q", MODEL, new long[0], 32), 0).chosen());
    }
    return chosen;
  }

  @Test
  void routersOnTheSameState_spreadWithNearTieRandomisation_andHerdWithout() {
    TrackerConfig on = TrackerConfig.defaults("x");
    TrackerConfig off = on.withPolicy(on.policy().withoutSpreading());

    assertThat(firstChoices(on))
        .as("randomised near-ties spread the first picks")
        .hasSizeGreaterThan(1);
    assertThat(firstChoices(off))
        .as("without randomisation every router picks the same")
        .hasSize(1);
  }
}
