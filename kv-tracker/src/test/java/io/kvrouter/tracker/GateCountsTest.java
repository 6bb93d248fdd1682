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
 * ledger stands. A reservation given back unannounced (turned away) leaves no predicted blocks
 * behind to draw the request's next decision back to that replica.
 */
class GateCountsTest {

  static RouteRequest request(String id, Map<String, Integer> gateCounts) {
    return new RouteRequest(
        id, MODEL, KEYS.keys(tokens(64, 7)), 64, Set.of(), true, Steering.NONE, gateCounts, 0);
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

  @Test
  void aTurnedAwayReservation_leavesNoPredictedBlocks_soTheRetryGoesToTheLeastLoaded() {
    KvTrackerCore core = tracker("in-1", "a", "b", "c");
    // One request on each of two replicas; the third is empty.
    Decision first = core.selectAndReserveUnannounced(request("x", Map.of()), 0);
    Decision second = core.selectAndReserveUnannounced(request2("y"), 0);
    String empty =
        java.util.stream.Stream.of("a", "b", "c")
            .filter(r -> !r.equals(first.chosen()) && !r.equals(second.chosen()))
            .findFirst()
            .orElseThrow();

    Decision q = core.selectAndReserveUnannounced(request3("q", Map.of()), 10);
    assertThat(q.chosen()).isEqualTo(empty);
    core.released("q", 11); // its gate turned it away, holding two requests
    Decision retry = core.selectAndReserveUnannounced(request3("q", Map.of(empty, 2)), 12);

    assertThat(retry.ranked().stream().mapToInt(Decision.Candidate::matchedBlocks).max())
        .as("no phantom prefix anywhere")
        .hasValue(0);
    assertThat(retry.chosen()).isNotEqualTo(empty);
    assertThat(inFlight(retry, retry.chosen())).isEqualTo(1);
  }

  static RouteRequest request2(String id) {
    return new RouteRequest(
        id, MODEL, KEYS.keys(tokens(64, 8)), 64, Set.of(), true, Steering.NONE, Map.of(), 0);
  }

  static RouteRequest request3(String id, Map<String, Integer> gateCounts) {
    return new RouteRequest(
        id, MODEL, KEYS.keys(tokens(64, 9)), 64, Set.of(), true, Steering.NONE, gateCounts, 0);
  }
}
