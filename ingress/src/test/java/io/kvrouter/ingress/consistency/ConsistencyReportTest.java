package io.kvrouter.ingress.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.TrackerView;
import io.kvrouter.protocol.TrackerView.OriginMark;
import io.kvrouter.protocol.TrackerView.ReplicaMark;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The cells of {@code /admin/consistency}: converged, lagging, diverged, per stream. */
class ConsistencyReportTest {

  static final ReplicaMark SIM0 = new ReplicaMark("sim-0", 7, 3, 12, 0xabcL);

  static ConsistencyReport.Answer answer(String ingress, ReplicaMark[] r, OriginMark... o) {
    return new ConsistencyReport.Answer(ingress, new TrackerView(ingress, 0, r, o, true));
  }

  static String state(ObjectNode json, int tracker, String plane, String stream) {
    return json.path("trackers").path(tracker).path(plane).path(stream).path("state").asText();
  }

  @Test
  void freshCluster_whereEachIngressKnowsOnlyItsOwnEmptyLog_isConverged() {
    ObjectNode json =
        ConsistencyReport.of(
                List.of(
                    answer("a", new ReplicaMark[] {SIM0}, new OriginMark("a", -1, 0, 0)),
                    answer("b", new ReplicaMark[] {SIM0}, new OriginMark("b", -1, 0, 0))))
            .toJson(0);

    assertThat(state(json, 0, "origins", "b")).isEqualTo("converged");
    assertThat(state(json, 1, "origins", "a")).isEqualTo("converged");
    assertThat(json.path("converged").asBoolean()).as(json.toPrettyString()).isTrue();
  }

  @Test
  void trackerThatHasNotSeenAnOriginsReservations_isLagging() {
    ObjectNode json =
        ConsistencyReport.of(
                List.of(
                    answer("a", new ReplicaMark[] {SIM0}, new OriginMark("a", 4, 1, 0x11L)),
                    answer("b", new ReplicaMark[] {SIM0})))
            .toJson(0);

    assertThat(state(json, 1, "origins", "a")).isEqualTo("lagging");
    assertThat(json.path("converged").asBoolean()).isFalse();
    assertThat(json.path("diverged").asBoolean()).isFalse();
  }

  @Test
  void equalWatermarkWithAnotherDigest_isDiverged_andCounted() {
    ReplicaMark other = new ReplicaMark("sim-0", 7, 3, 12, 0xdefL);
    ConsistencyReport report =
        ConsistencyReport.of(
            List.of(answer("a", new ReplicaMark[] {SIM0}), answer("b", new ReplicaMark[] {other})));
    ObjectNode json = report.toJson(0);

    assertThat(state(json, 0, "replicas", "sim-0")).isEqualTo("diverged");
    assertThat(json.path("diverged").asBoolean()).isTrue();
    assertThat(report.divergedCells()).isEqualTo(2);
  }

  @Test
  void trackerBehindOnAReplica_isLagging_andTheOneAhead_converged() {
    ReplicaMark behind = new ReplicaMark("sim-0", 7, 1, 10, 0x123L);
    ObjectNode json =
        ConsistencyReport.of(
                List.of(
                    answer("a", new ReplicaMark[] {SIM0}), answer("b", new ReplicaMark[] {behind})))
            .toJson(0);

    assertThat(state(json, 0, "replicas", "sim-0")).isEqualTo("converged");
    assertThat(state(json, 1, "replicas", "sim-0")).isEqualTo("lagging");
    assertThat(
            json.path("trackers").path(1).path("replicas").path("sim-0").path("lag_seq").asLong())
        .isEqualTo(2);
  }
}
