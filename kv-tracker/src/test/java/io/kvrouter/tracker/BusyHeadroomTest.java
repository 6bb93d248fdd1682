package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.replica;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.tracker.steering.Steering;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A request granted busy headroom may go that many reservations past max-in-flight, no further. */
class BusyHeadroomTest {

  static RouteRequest request(String id, int headroom) {
    long[] keys = KEYS.keys(tokens(64, id.hashCode()));
    return new RouteRequest(id, MODEL, keys, 64, Set.of(), true, Steering.NONE, Map.of(), headroom);
  }

  @Test
  void headroom_placesPastTheBusyThreshold_byThatManyReservations_andNoMore() {
    KvTrackerCore t = KvTrackerCoreTest.busyAt(2);
    t.replicaUp(replica("a", true));
    assertThat(t.selectAndReserve(request("q1", 0), 0).chosen()).isEqualTo("a");
    assertThat(t.selectAndReserve(request("q2", 0), 0).chosen()).isEqualTo("a");

    assertThat(t.selectAndReserve(request("q3", 0), 0).busy())
        .as("two reservations: busy without headroom")
        .isTrue();
    assertThat(t.selectAndReserve(request("q4", 2), 0).chosen()).isEqualTo("a");
    assertThat(t.selectAndReserve(request("q5", 2), 0).chosen()).isEqualTo("a");
    assertThat(t.selectAndReserve(request("q6", 2), 0).busy())
        .as("four reservations: busy even with a headroom of two")
        .isTrue();
    assertThat(t.openReservations()).isEqualTo(4);

    t.released("q4");
    assertThat(t.selectAndReserve(request("q7", 0), 0).busy())
        .as("the headroom was this request's alone: three are still over the threshold")
        .isTrue();
    assertThat(t.selectAndReserve(request("q8", 2), 0).chosen()).isEqualTo("a");
  }
}
