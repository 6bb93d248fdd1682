package io.kvrouter.ingress.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReplicaConstraintsTest {

  static ReplicaInfo replica(String id, String model, List<String> apis) {
    return new ReplicaInfo(
        id, 0, model, "http://" + id, 16, List.of(Tier.GPU), "both", true, true, apis, 1, null);
  }

  final List<ReplicaInfo> replicas =
      List.of(
          replica("a", "m", List.of(ReplicaInfo.RESPONSES_API)),
          replica("b", "m", List.of()),
          replica("c", "m", List.of(ReplicaInfo.RESPONSES_API, ReplicaInfo.MESSAGES_API)),
          replica("d", "other", List.of()));

  ReplicaQuery query(String pinned, String api) {
    return new ReplicaQuery("r", "m", new int[] {1}, 4, Set.of("x"), null, pinned, api);
  }

  @Test
  void unconstrainedQuery_excludesOnlyWhatItTried() {
    assertThat(ReplicaConstraints.excluded(query(null, null), replicas)).containsExactly("x");
  }

  @Test
  void requiredApi_excludesReplicasWhoseEngineDoesNotServeIt() {
    assertThat(ReplicaConstraints.excluded(query(null, ReplicaInfo.RESPONSES_API), replicas))
        .containsExactlyInAnyOrder("x", "b");
  }

  @Test
  void pinToAKnownReplica_excludesEveryOtherReplicaOfTheModel() {
    assertThat(ReplicaConstraints.excluded(query("c", ReplicaInfo.RESPONSES_API), replicas))
        .containsExactlyInAnyOrder("x", "a", "b");
  }

  @Test
  void pinToAReplicaThatLeft_isDropped() {
    assertThat(ReplicaConstraints.excluded(query("gone", ReplicaInfo.RESPONSES_API), replicas))
        .containsExactlyInAnyOrder("x", "b");
  }
}
