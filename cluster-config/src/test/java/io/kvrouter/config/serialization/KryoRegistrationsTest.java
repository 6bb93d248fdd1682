package io.kvrouter.config.serialization;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Pins the Kryo wire contract. If this test fails you changed a registration id: nodes of the
 * previous release would read a different class than this one writes. Ids are append-only.
 */
class KryoRegistrationsTest {

  @Test
  void registrationIds_areStableAcrossReleases() {
    Map<String, Integer> expected = new LinkedHashMap<>();
    expected.put("[J", 100);
    expected.put("[I", 101);
    expected.put("[Ljava.lang.String;", 102);
    expected.put("[Lio.kvrouter.protocol.KvEvent;", 103);
    expected.put("io.kvrouter.protocol.Tier", 104);
    expected.put("[B", 105);
    expected.put("[Lio.kvrouter.protocol.KvEventBatch;", 106);
    expected.put("io.kvrouter.protocol.KvEventBatch", 200);
    expected.put("io.kvrouter.protocol.BlocksStored", 201);
    expected.put("io.kvrouter.protocol.BlocksRemoved", 202);
    expected.put("io.kvrouter.protocol.ReplicaCleared", 203);
    expected.put("io.kvrouter.protocol.ReplicaLoad", 204);
    expected.put("io.kvrouter.protocol.WindowBlocks", 205);
    expected.put("io.kvrouter.protocol.Reserved", 300);
    expected.put("io.kvrouter.protocol.PrefillCompleted", 301);
    expected.put("io.kvrouter.protocol.Released", 302);
    expected.put("[Lio.kvrouter.protocol.ReservationEvent;", 303);
    expected.put("io.kvrouter.protocol.ReplayReservations", 304);
    expected.put("io.kvrouter.protocol.ReservationReplay", 305);
    expected.put("io.kvrouter.protocol.ReservationMark", 306);
    expected.put("io.kvrouter.protocol.GetInfo", 400);
    expected.put("io.kvrouter.protocol.RequestReplay", 401);
    expected.put("io.kvrouter.protocol.Replayed", 402);
    expected.put("io.kvrouter.protocol.SnapshotReply", 403);
    expected.put("io.kvrouter.protocol.ReplicaSnapshot", 404);
    expected.put("io.kvrouter.protocol.GetTrackerView", 600);
    expected.put("io.kvrouter.protocol.TrackerView", 601);
    expected.put("io.kvrouter.protocol.TrackerView$ReplicaMark", 602);
    expected.put("io.kvrouter.protocol.TrackerView$OriginMark", 603);
    expected.put("[Lio.kvrouter.protocol.TrackerView$ReplicaMark;", 604);
    expected.put("[Lio.kvrouter.protocol.TrackerView$OriginMark;", 605);
    expected.put("io.kvrouter.protocol.TrackerReport$Accuracy", 690);
    expected.put("[Lio.kvrouter.protocol.TrackerReport$Accuracy;", 691);
    expected.put("io.kvrouter.protocol.TrackerReport", 692);
    expected.put("io.kvrouter.protocol.TrackerReport$Trim", 693);
    expected.put("[Lio.kvrouter.protocol.TrackerReport$Trim;", 694);
    expected.put("io.kvrouter.protocol.GetTrackerReport", 695);
    expected.put("io.kvrouter.protocol.GateCommand$Admit", 700);
    expected.put("io.kvrouter.protocol.GateCommand$Leave", 701);
    expected.put("io.kvrouter.protocol.GateCommand$Admission", 702);
    expected.put("io.kvrouter.protocol.TenantQuotaCommand$Acquire", 1020);
    expected.put("io.kvrouter.protocol.TenantQuotaCommand$Verdict", 1021);
    expected.put("io.kvrouter.protocol.TenantQuotaCommand$Standing", 1022);
    expected.put("io.kvrouter.protocol.CompactReserved", 1050);
    expected.put("io.kvrouter.protocol.CompactPrefillCompleted", 1051);
    expected.put("io.kvrouter.protocol.CompactReleased", 1052);
    expected.put("io.kvrouter.protocol.RouteIntent", 1060);
    expected.put("io.kvrouter.protocol.SharedTiming", 1061);

    Map<String, Integer> actual = new LinkedHashMap<>();
    KryoRegistrations.builtIn().forEach((type, id) -> actual.put(type.getName(), id));

    assertThat(actual).containsExactlyEntriesOf(expected);
    assertThat(KryoRegistrations.TYPED_ACTOR_REF_ID).isEqualTo(500);
    assertThat(KryoRegistrations.CLASSIC_ACTOR_REF_ID).isEqualTo(501);
    assertThat(KryoSerializer.IDENTIFIER).isEqualTo(7301);
  }

  @Test
  void registrationIds_areUniqueAndBelowTheExtraRange() {
    assertThat(KryoRegistrations.builtIn().values()).doesNotHaveDuplicates();
    assertThat(KryoRegistrations.builtIn().values())
        .allSatisfy(id -> assertThat(id).isLessThan(KryoRegistrations.FIRST_EXTRA_ID));
  }
}
