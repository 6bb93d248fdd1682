package io.kvrouter.ingress.consistency;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.protocol.TrackerView;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConsistencyReportTest {

  private static TrackerView view(
      String ingress, long seq, long digest, TrackerView.Accuracy... a) {
    return new TrackerView(
        ingress,
        0,
        new TrackerView.ReplicaMark[] {
          new TrackerView.ReplicaMark("r0", 1, seq, 3, digest),
          new TrackerView.ReplicaMark("r1", 1, 7, 5, 99)
        },
        new TrackerView.OriginMark[0],
        true,
        a);
  }

  private static JsonNode report(TrackerView... views) {
    List<ConsistencyReport.Answer> answers =
        java.util.Arrays.stream(views)
            .map(v -> new ConsistencyReport.Answer(v.ingressId(), v))
            .toList();
    return ConsistencyReport.of(answers).toJson(0);
  }

  @Test
  void trackersAgreeingOnAPictureTheEngineDoesNotHold_areConvergedButNotAccurate() {
    JsonNode r =
        report(
            view("in-1", 4, 42, new TrackerView.Accuracy("r0", 20, 11, true)),
            view("in-2", 4, 42, new TrackerView.Accuracy("r0", 5, 1, false)));

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
            view("in-1", 4, 42, new TrackerView.Accuracy("r0", 20, 0, false)), view("in-2", 4, 43));
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
                    new ConsistencyReport.Answer("in-2", null)))
            .toJson(0);
    assertThat(unreachable.path("converged").asBoolean()).isFalse();
    assertThat(unreachable.path("per_replica").path("r1").path("converged").asBoolean()).isFalse();
  }

  @Test
  void aTrackerWhoseBudgetTrimmedAReplica_isLeftOutOfTheComparison_andNotCalledConverged() {
    TrackerView trimmed =
        new TrackerView(
            "in-3",
            0,
            new TrackerView.ReplicaMark[] {
              new TrackerView.ReplicaMark("r0", 1, 4, 2, 7, 1),
              new TrackerView.ReplicaMark("r1", 1, 7, 5, 99)
            },
            new TrackerView.OriginMark[0],
            true);
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
