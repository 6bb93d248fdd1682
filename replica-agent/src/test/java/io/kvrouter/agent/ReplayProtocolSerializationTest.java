package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.serialization.KryoSerializer;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplayReply;
import io.kvrouter.protocol.Replayed;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.protocol.Tier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The agent's replay protocol goes through kvrouter's Kryo serializer with fixed ids. */
class ReplayProtocolSerializationTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private static Object roundTrip(Object msg) {
    Serialization ser = SerializationExtension.get(testKit.system().classicSystem());
    var serializer = ser.findSerializerFor(msg);
    assertThat(serializer).isInstanceOf(KryoSerializer.class);
    byte[] bytes = ser.serialize(msg).get();
    return ser.deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, msg))
        .get();
  }

  @Test
  void replayRequestsAndRepliesRoundTripThroughKryo() {
    TestProbe<ReplayReply> replies = testKit.createTestProbe();
    TestProbe<ReplicaInfo> infos = testKit.createTestProbe();
    RequestReplay req = new RequestReplay("r1", 42, 7, replies.getRef());
    assertThat(roundTrip(req)).isEqualTo(req);
    GetInfo info = new GetInfo(infos.getRef());
    assertThat(roundTrip(info)).isEqualTo(info);
    KvEvent[] events = {
      new ReplicaCleared(), new BlocksStored(0, new long[] {-5}, new long[] {9}, Tier.GPU)
    };
    Replayed replayed =
        new Replayed("r1", 42, new KvEventBatch[] {new KvEventBatch("r1", 42, 7, events)});
    assertThat(roundTrip(replayed)).isEqualTo(replayed);
    SnapshotReply snap = new SnapshotReply(new ReplicaSnapshot("r1", 42, 6, events));
    assertThat(roundTrip(snap)).isEqualTo(snap);
  }
}
