package io.kvrouter.ingress.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.TrackerReport;
import io.kvrouter.protocol.TrackerView;
import io.kvrouter.protocol.TrackerView.OriginMark;
import io.kvrouter.protocol.TrackerView.ReplicaMark;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cells of {@code /admin/consistency}: converged, lagging, diverged, trimmed, per stream; and
 * per replica converged beside accurate.
 */
class ConsistencyReportTest {

  static final ReplicaMark SIM0 = new ReplicaMark("sim-0", 7, 3, 12, 0xabcL);

  static ConsistencyReport.Answer answer(String ingress, ReplicaMark[] r, OriginMark... o) {
    return ConsistencyReport.Answer.of(ingress, new TrackerView(ingress, 0, r, o, true));
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

  private static TrackerReport view(
      String ingress, long seq, long digest, TrackerReport.Accuracy... a) {
    return new TrackerReport(
        new TrackerView(
            ingress,
            0,
            new TrackerView.ReplicaMark[] {
              new TrackerView.ReplicaMark("r0", 1, seq, 3, digest),
              new TrackerView.ReplicaMark("r1", 1, 7, 5, 99)
            },
            new TrackerView.OriginMark[0],
            true),
        new TrackerReport.Trim[0],
        a);
  }

  private static JsonNode report(TrackerReport... views) {
    List<ConsistencyReport.Answer> answers =
        java.util.Arrays.stream(views)
            .map(v -> new ConsistencyReport.Answer(v.view().ingressId(), v))
            .toList();
    return ConsistencyReport.of(answers).toJson(0);
  }

  @Test
  void trackersAgreeingOnAPictureTheEngineDoesNotHold_areConvergedButNotAccurate() {
    JsonNode r =
        report(
            view("in-1", 4, 42, new TrackerReport.Accuracy("r0", 20, 11, true)),
            view("in-2", 4, 42, new TrackerReport.Accuracy("r0", 5, 1, false)));

    assertThat(r.path("converged").asBoolean()).isTrue();
    assertThat(r.path("accurate").asBoolean()).isFalse();
    JsonNode r0 = r.path("per_replica").path("r0");
    assertThat(r0.path("converged").asBoolean()).isTrue();
    assertThat(r0.path("accurate").asBoolean()).isFalse();
    assertThat(r0.path("samples").asInt()).isEqualTo(25);
    assertThat(r0.path("mismatch_ratio").asDouble()).isEqualTo(12 / 25.0);
    assertThat(r0.path("alerting_on").toString()).isEqualTo("[\"in-1\"]");
    JsonNode r1 = r.path("per_replica").path("r1");
    assertThat(r1.path("converged").asBoolean()).isTrue();
    assertThat(r1.path("accurate").isNull()).as("no ingress has a sample yet").isTrue();
  }

  @Test
  void accurateButDiverged_isReportedAsSuch() {
    JsonNode r =
        report(
            view("in-1", 4, 42, new TrackerReport.Accuracy("r0", 20, 0, false)),
            view("in-2", 4, 43));
    assertThat(r.path("converged").asBoolean()).isFalse();
    assertThat(r.path("diverged").asBoolean()).isTrue();
    assertThat(r.path("accurate").asBoolean()).isTrue();
    assertThat(r.path("per_replica").path("r0").path("converged").asBoolean()).isFalse();
    assertThat(r.path("per_replica").path("r0").path("accurate").asBoolean()).isTrue();
  }

  @Test
  void aLaggingTracker_leavesTheReplicaNotConverged_andAnUnreachableOneEverything() {
    JsonNode lagging = report(view("in-1", 4, 42), view("in-2", 3, 41));
    assertThat(lagging.path("per_replica").path("r0").path("converged").asBoolean()).isFalse();
    assertThat(lagging.path("per_replica").path("r1").path("converged").asBoolean()).isTrue();

    JsonNode unreachable =
        ConsistencyReport.of(
                List.of(
                    new ConsistencyReport.Answer("in-1", view("in-1", 4, 42)),
                    new ConsistencyReport.Answer("in-2", (TrackerReport) null)))
            .toJson(0);
    assertThat(unreachable.path("converged").asBoolean()).isFalse();
    assertThat(unreachable.path("per_replica").path("r1").path("converged").asBoolean()).isFalse();
  }

  @Test
  void aTrackerWhoseBudgetTrimmedAReplica_isLeftOutOfTheComparison_andNotCalledConverged() {
    TrackerReport trimmed =
        new TrackerReport(
            new TrackerView(
                "in-3",
                0,
                new TrackerView.ReplicaMark[] {
                  new TrackerView.ReplicaMark("r0", 1, 4, 2, 7),
                  new TrackerView.ReplicaMark("r1", 1, 7, 5, 99)
                },
                new TrackerView.OriginMark[0],
                true),
            new TrackerReport.Trim[] {new TrackerReport.Trim("r0", 1)},
            new TrackerReport.Accuracy[0]);
    JsonNode r = report(view("in-1", 4, 42), view("in-2", 4, 42), trimmed);
    assertThat(r.path("diverged").asBoolean()).isFalse();
    assertThat(r.path("trimmed").asBoolean()).isTrue();
    assertThat(r.path("converged").asBoolean()).isFalse();
    JsonNode cells = r.path("trackers");
    assertThat(cells.get(0).path("replicas").path("r0").path("state").asText())
        .isEqualTo("converged");
    assertThat(cells.get(2).path("replicas").path("r0").path("state").asText())
        .isEqualTo("trimmed");
    assertThat(cells.get(2).path("replicas").path("r0").path("trimmed").asLong()).isOne();

    JsonNode diverged = report(view("in-1", 4, 42), view("in-2", 4, 41), trimmed);
    assertThat(diverged.path("diverged").asBoolean())
        .as("untrimmed trackers still must agree")
        .isTrue();
  }
}
