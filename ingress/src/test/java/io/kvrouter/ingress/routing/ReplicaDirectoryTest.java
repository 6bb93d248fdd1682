package io.kvrouter.ingress.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReplicaDirectoryTest {

  private static ReplicaInfo info(String id, String model, String role, List<String> adapters) {
    return new ReplicaInfo(
        id,
        0,
        model,
        "http://127.0.0.1:8000/" + id + "/",
        16,
        List.of(Tier.GPU),
        role,
        true,
        true,
        List.of(),
        1,
        adapters);
  }

  @Test
  void aReader_keepsTheStateItRead_whileTheWriterMovesOn() {
    ReplicaDirectory directory = new ReplicaDirectory();
    directory.put(info("a", "m", ReplicaInfo.BOTH, List.of()));
    Collection<ReplicaInfo> seen = directory.all();
    directory.put(info("b", "m", ReplicaInfo.BOTH, List.of()));
    directory.remove("a");

    assertThat(seen).extracting(ReplicaInfo::targetId).containsExactly("a");
    assertThat(directory.all()).extracting(ReplicaInfo::targetId).containsExactly("b");
    assertThatThrownBy(() -> seen.clear()).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void derivedViews_followEveryChange() {
    ReplicaDirectory directory = new ReplicaDirectory();
    directory.put(info("p", "m", ReplicaInfo.PREFILL, List.of()));
    directory.put(info("d", "m", ReplicaInfo.DECODE, List.of("m-lora")));
    directory.put(info("x", "other", ReplicaInfo.BOTH, List.of("m")));

    assertThat(directory.models()).containsExactlyInAnyOrder("m", "other", "m-lora");
    assertThat(directory.disaggregated("m")).isTrue();
    assertThat(directory.rolesMatter("other")).isFalse();
    // "m" is a base model, so replica x's adapter of that name is not taken as an adapter.
    assertThat(directory.adapter("m")).isEmpty();
    assertThat(directory.adapter("m-lora"))
        .contains(new ReplicaDirectory.Adapter("m", Set.of("d")));
    assertThat(directory.baseModel("m-lora")).isEqualTo("m");
    assertThat(directory.target("p").orElseThrow().baseUrl()).isEqualTo("http://127.0.0.1:8000/p");

    directory.remove("p");
    directory.put(info("d", "m", ReplicaInfo.BOTH, List.of()));

    assertThat(directory.disaggregated("m")).isFalse();
    assertThat(directory.rolesMatter("m")).isFalse();
    assertThat(directory.adapter("m-lora")).isEmpty();
    assertThat(directory.models()).containsExactlyInAnyOrder("m", "other");
    assertThat(directory.get("p")).isEmpty();
  }
}
