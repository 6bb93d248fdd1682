package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static io.kvrouter.tracker.KvTrackerCoreTest.tracker;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.tracker.steering.Steering;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Strict mode's gate counts in a decision: a replica whose gate reported requests this tracker has
 * not heard of is weighed with them (and reported with them as its expected count), so the decision
 * goes where the gates' counts leave the least load; where the ledger already counts more, the
 * ledger stands.
 */
class GateCountsTest {

  static RouteRequest request(String id, Map<String, Integer> gateCounts) {
    return new RouteRequest(
        id, MODEL, KEYS.keys(tokens(64, 7)), 64, Set.of(), true, Steering.NONE, gateCounts);
  }

  static int inFlight(Decision d, String replica) {
    return d.ranked().stream()
        .filter(c -> c.replicaId().equals(replica))
        .findFirst()
        .orElseThrow()
        .inFlight();
  }

  @Test
  void replicasWhoseGatesReportedRequests_areWeighedWithThem_andTheDecisionGoesElsewhere() {
    KvTrackerCore core = tracker("in-1", "a", "b", "c", "d", "e");
    Decision d =
        core.selectAndReserveUnannounced(
            request("q", Map.of("a", 1, "b", 2, "c", 1, "d", 1, "unknown", 3)), 0);

    assertThat(d.chosen()).isEqualTo("e");
    assertThat(inFlight(d, "e")).isZero();
    assertThat(inFlight(d, "a")).isEqualTo(1);
    assertThat(inFlight(d, "b")).isEqualTo(2);
  }

  @Test
  void whereTheLedgerCountsMore_theLedgerStands_andTheChosenCountsWhatItHeldBefore() {
    KvTrackerCore core = tracker("in-1", "a");
    core.selectAndReserveUnannounced(request("first", Map.of()), 0);
    core.selectAndReserveUnannounced(request("second", Map.of()), 0);

    Decision d = core.selectAndReserveUnannounced(request("q", Map.of("a", 1)), 0);
    assertThat(inFlight(d, "a")).as("two own reservations, the gate said one").isEqualTo(2);

    Decision more = core.selectAndReserveUnannounced(request("q2", Map.of("a", 7)), 0);
    assertThat(inFlight(more, "a")).as("the gate's seven").isEqualTo(7);
  }
}
