package io.kvrouter.config.serialization;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KryoWire;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.Tier;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class KryoSerializerTest {

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

  private static Object roundTrip(Object message) {
    byte[] bytes = serialization.serialize(message).get();
    var serializer = serialization.findSerializerFor(message);
    return serialization.deserialize(bytes, serializer.identifier(), "").get();
  }

  @Test
  void eventPlaneAndReservationRecords_roundTripThroughKryo() {
    KvEventBatch batch =
        new KvEventBatch(
            "r1",
            7,
            42,
            new KvEvent[] {
              new BlocksStored(
                  BlocksStored.ROOT, new long[] {-1L, 5L}, new long[] {11L, 12L}, Tier.GPU),
              new BlocksRemoved(new long[] {Long.MIN_VALUE}, Tier.CPU),
              new ReplicaCleared()
            });
    List<Object> messages =
        List.of(
            batch,
            new ReplicaLoad("r1", 7, 3, 1, 0.25, 100, 50, 123456789L),
            new Reserved("i1", 9, "req-1", "r1", 512, 2048, 77L, new long[] {1, 2, 3}, 30_000),
            new PrefillCompleted("i1", 10, "req-1"),
            new Released("i1", 11, "req-1"));
    for (Object message : messages) {
      assertThat(serialization.findSerializerFor(message)).isInstanceOf(KryoSerializer.class);
      assertThat(roundTrip(message)).isEqualTo(message);
    }
  }

  @Test
  void wireBytes_areThePinnedRegistrationIdAndComponentsInNameOrder() {
    byte[] bytes = serialization.serialize(new Released("i", 3, "r")).get();
    // varint(302 + 2) = b0 02; then the components in alphabetical order of their names, as
    // Kryo's record serializer writes them: ingressId "i" (82 = length 1 + 1, UTF-8 flag; 69),
    // requestId "r" (82 72), seq 3 (zig-zag varlong 06). Renaming a component changes the wire.
    assertThat(HexFormat.of().formatHex(bytes)).isEqualTo("b0028269827206");
  }

  @Test
  void unregisteredClass_isRejectedWithAClearError() {
    record NotRegistered(long x) implements KryoWire {}
    var result = serialization.serialize(new NotRegistered(1));
    assertThat(result.isFailure()).isTrue();
    Throwable error = result.failed().get();
    assertThat(error)
        .isInstanceOf(UnregisteredClassException.class)
        .hasMessageContaining(NotRegistered.class.getName())
        .hasMessageContaining("KryoRegistrations");
  }

  @Test
  void unregisteredClassInsideARegisteredMessage_isRejectedNamingTheInnerClass() {
    var result = serialization.serialize(new Carrier(new ArrayList<>()));
    assertThat(result.failed().get())
        .isInstanceOf(UnregisteredClassException.class)
        .hasMessageContaining("class java.util.ArrayList (in a " + Carrier.class.getName() + ")");
  }

  @Test
  void controlMessages_goThroughJacksonCbor() {
    ReplicaInfo info =
        new ReplicaInfo(
            "r1", 1, "m", "http://127.0.0.1:8000", 16, List.of(Tier.GPU), "both", true, true);
    var serializer = serialization.findSerializerFor(info);
    assertThat(serializer.getClass().getName()).contains("JacksonCborSerializer");
    byte[] bytes = serialization.serialize(info).get();
    Object back =
        serialization
            .deserialize(bytes, serializer.identifier(), ReplicaInfo.class.getName())
            .get();
    assertThat(back).isEqualTo(info);
    assertThat(info.targetId()).isEqualTo("r1#1");
  }

  @Test
  void javaSerialization_isOff() {
    record Plain(int x) implements Serializable {}
    assertThat(serialization.serialize(new Plain(1)).isFailure()).isTrue();
  }
}
