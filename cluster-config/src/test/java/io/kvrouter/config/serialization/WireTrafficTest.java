package io.kvrouter.config.serialization;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.config.serialization.WireTraffic.Direction;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.WirePlane;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class WireTrafficTest {

  private static ActorSystem<Void> system;
  private static Serialization serialization;

  @BeforeAll
  static void start() {
    system =
        NodeBootstrap.start(
            NodeSettings.dev(List.of(NodeSettings.ROLE_INGRESS), List.of()), Map.of());
    serialization = SerializationExtension.get(Adapter.toClassic(system));
  }

  @AfterAll
  static void stop() {
    system.terminate();
  }

  @Test
  void aReservationWrittenAndRead_countsItsBytesOnTheReservationPlaneOnly() {
    WireTraffic traffic = WireTraffic.get(system);
    long sentBefore = traffic.bytes(WirePlane.RESERVATIONS, Direction.SENT);
    long receivedBefore = traffic.bytes(WirePlane.RESERVATIONS, Direction.RECEIVED);
    long messagesBefore = traffic.messages(WirePlane.RESERVATIONS, Direction.SENT);
    long eventsBefore = traffic.bytes(WirePlane.EVENTS, Direction.SENT);

    Reserved reserved =
        new Reserved("i1", 9, "req-1", "r1", 512, 2048, 77L, new long[] {1, 2, 3}, 30_000);
    byte[] bytes = serialization.serialize(reserved).get();
    serialization.deserialize(bytes, KryoSerializer.IDENTIFIER, "").get();

    assertThat(traffic.bytes(WirePlane.RESERVATIONS, Direction.SENT) - sentBefore)
        .isEqualTo(bytes.length);
    assertThat(traffic.bytes(WirePlane.RESERVATIONS, Direction.RECEIVED) - receivedBefore)
        .isEqualTo(bytes.length);
    assertThat(traffic.messages(WirePlane.RESERVATIONS, Direction.SENT) - messagesBefore)
        .isEqualTo(1);
    assertThat(traffic.bytes(WirePlane.EVENTS, Direction.SENT)).isEqualTo(eventsBefore);
  }

  @Test
  void aKvEventBatch_countsOnTheEventPlane() {
    WireTraffic traffic = WireTraffic.get(system);
    long before = traffic.bytes(WirePlane.EVENTS, Direction.SENT);
    byte[] bytes =
        serialization
            .serialize(new KvEventBatch("r1", 1, 2, new KvEvent[] {new ReplicaCleared()}))
            .get();
    assertThat(traffic.bytes(WirePlane.EVENTS, Direction.SENT) - before).isEqualTo(bytes.length);
  }

  @Test
  void eventBatchesWrittenAndRead_chargeTheirCpuToTheEventPlaneOnly() {
    WireTraffic traffic = WireTraffic.get(system);
    long encodeBefore = traffic.cpuNanos(WirePlane.EVENTS, WireTraffic.Work.ENCODE);
    long decodeBefore = traffic.cpuNanos(WirePlane.EVENTS, WireTraffic.Work.DECODE);
    long gateBefore = traffic.cpuNanos(WirePlane.GATE, WireTraffic.Work.DECODE);
    long applyBefore = traffic.cpuNanos(WirePlane.EVENTS, WireTraffic.Work.APPLY);

    KvEventBatch batch = new KvEventBatch("r1", 1, 2, new KvEvent[] {new ReplicaCleared()});
    // Enough work that the thread CPU clock moves whatever its resolution.
    for (int i = 0; i < 2_000; i++) {
      byte[] bytes = serialization.serialize(batch).get();
      serialization.deserialize(bytes, KryoSerializer.IDENTIFIER, "").get();
    }

    assertThat(traffic.cpuNanos(WirePlane.EVENTS, WireTraffic.Work.ENCODE))
        .isGreaterThan(encodeBefore);
    assertThat(traffic.cpuNanos(WirePlane.EVENTS, WireTraffic.Work.DECODE))
        .isGreaterThan(decodeBefore);
    assertThat(traffic.cpuNanos(WirePlane.GATE, WireTraffic.Work.DECODE)).isEqualTo(gateBefore);
    assertThat(traffic.cpuNanos(WirePlane.EVENTS, WireTraffic.Work.APPLY)).isEqualTo(applyBefore);
  }

  @Test
  void spent_countsOnlyTimeThatMovedForward() {
    WireTraffic traffic = WireTraffic.get(system);
    long before = traffic.cpuNanos(WirePlane.LOAD, WireTraffic.Work.APPLY);
    traffic.spent(WirePlane.LOAD, WireTraffic.Work.APPLY, 1_000, 1_750);
    traffic.spent(WirePlane.LOAD, WireTraffic.Work.APPLY, 0, 0); // no CPU clock on this JVM
    assertThat(traffic.cpuNanos(WirePlane.LOAD, WireTraffic.Work.APPLY) - before).isEqualTo(750);
  }
}
