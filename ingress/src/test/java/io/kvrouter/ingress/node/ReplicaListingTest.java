package io.kvrouter.ingress.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.keys.SpeculativeDecoding;
import io.kvrouter.tracker.TrackerDigests;
import io.kvrouter.tracker.actor.KvTracker;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /admin/replicas} says which engine each replica is, the router's block-key settings
 * for its model, and whether its events line up with them (an unaligned one flagged, with why).
 */
class ReplicaListingTest {

  private static final KvTracker.Loads NO_LOADS = new KvTracker.Loads(Map.of(), null, Map.of());
  private static final TrackerDigests NO_DIGESTS = new TrackerDigests(Map.of(), Map.of());

  private static ReplicaInfo replica(String id) {
    return new ReplicaInfo(id, 0, "m", "http://" + id, 16, List.of(Tier.GPU), "both", true, true);
  }

  @Test
  void eachReplica_showsItsEngine_theRoutersKeys_andItsAlignment() {
    ReplicaInfo vllm =
        replica("a")
            .with(
                new EngineIdentity("vllm", "0.11.0", "sha256_cbor", 16)
                    .withSpeculative(SpeculativeDecoding.of("eagle3")),
                AlignmentStatus.ALIGNED);
    ReplicaInfo flagged =
        replica("b")
            .with(
                new EngineIdentity("sglang", null, null, 32),
                AlignmentStatus.unaligned("block size: the engine stores blocks of 32 tokens"));

    JsonNode list = ReplicaListing.of(List.of(vllm, flagged), NO_DIGESTS, NO_LOADS, model -> 16);

    JsonNode a = list.get(0);
    assertThat(a.path("replica").asText()).isEqualTo("a");
    assertThat(a.path("engine").path("kind").asText()).isEqualTo("vllm");
    assertThat(a.path("engine").path("version").asText()).isEqualTo("0.11.0");
    assertThat(a.path("engine").path("hash_algo").asText()).isEqualTo("sha256_cbor");
    assertThat(a.path("engine").path("block_size").asInt()).isEqualTo(16);
    assertThat(a.path("engine").path("speculative_method").asText()).isEqualTo("eagle3");
    assertThat(a.path("keys").path("block_size").asInt()).isEqualTo(16);
    assertThat(a.path("keys").path("extras").toString())
        .isEqualTo("[\"lora\",\"cache_salt\",\"mm\"]");
    assertThat(a.path("alignment").path("state").asText()).isEqualTo("aligned");
    assertThat(a.path("alignment").path("reason").asText()).isEmpty();

    JsonNode b = list.get(1);
    assertThat(b.path("engine").path("kind").asText()).isEqualTo("sglang");
    assertThat(b.path("engine").path("version").asText()).isEqualTo("unknown");
    assertThat(b.path("engine").path("hash_algo").asText()).isEqualTo("unknown");
    assertThat(b.path("engine").path("block_size").asInt()).isEqualTo(32);
    assertThat(b.path("engine").path("speculative_method").asText()).isEqualTo("none");
    assertThat(b.path("alignment").path("state").asText()).isEqualTo("unaligned");
    assertThat(b.path("alignment").path("reason").asText()).contains("blocks of 32 tokens");
  }

  @Test
  void replicaOfAnOlderAgent_showsItsEngineUnknown_andUnchecked() {
    JsonNode r = ReplicaListing.of(List.of(replica("c")), NO_DIGESTS, NO_LOADS, m -> 16).get(0);

    assertThat(r.path("engine").path("kind").asText()).isEqualTo("unknown");
    assertThat(r.path("engine").path("block_size").isNull()).isTrue();
    assertThat(r.path("alignment").path("state").asText()).isEqualTo("unchecked");
    assertThat(r.path("block_size").asInt()).as("what the agent declared").isEqualTo(16);
  }
}
