package io.kvrouter.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.engine.ZmqFrames;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class TransportFramesTest {

  private static final byte[] EMPTY = new byte[0];
  private static final byte[] TOPIC = "kv@pod@model".getBytes(StandardCharsets.UTF_8);
  private static final byte[] PAYLOAD = {(byte) 0x93, 0, (byte) 0x90, (byte) 0xc0};

  @Test
  void seqFrames_areEightBytesBigEndianUnsigned() {
    assertThat(ZmqFrames.seq(258)).containsExactly(0, 0, 0, 0, 0, 0, 1, 2);
    assertThat(ZmqFrames.seq(ZmqFrames.seq(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
    assertThat(ZmqFrames.seq(ZmqFrames.END_OF_REPLAY))
        .containsExactly(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
  }

  @Test
  void liveMessage_withTopicOrBare_andRejectsWrongShapes() {
    TransportFrames.Message m = TransportFrames.live(List.of(TOPIC, ZmqFrames.seq(7), PAYLOAD));
    assertThat(m.seq()).isEqualTo(7);
    assertThat(m.payload()).isEqualTo(PAYLOAD);
    assertThat(TransportFrames.live(List.of(ZmqFrames.seq(8), PAYLOAD)).seq()).isEqualTo(8);
    assertThat(TransportFrames.live(List.of(PAYLOAD))).isNull();
    assertThat(TransportFrames.live(List.of(TOPIC, new byte[4], PAYLOAD))).isNull();
  }

  @Test
  void replayReply_oldLayoutWithoutTopic() {
    TransportFrames.Message m = TransportFrames.replay(List.of(EMPTY, ZmqFrames.seq(3), PAYLOAD));
    assertThat(m.seq()).isEqualTo(3);
    assertThat(m.endOfReplay()).isFalse();
    TransportFrames.Message end =
        TransportFrames.replay(List.of(EMPTY, ZmqFrames.seq(ZmqFrames.END_OF_REPLAY), EMPTY));
    assertThat(end.endOfReplay()).isTrue();
    assertThat(end.seq()).isEqualTo(-1);
  }

  @Test
  void replayReply_newLayoutWithTopic_includingAnEmptyTopic() {
    TransportFrames.Message m =
        TransportFrames.replay(List.of(EMPTY, TOPIC, ZmqFrames.seq(4), PAYLOAD));
    assertThat(m.seq()).isEqualTo(4);
    assertThat(m.payload()).isEqualTo(PAYLOAD);
    TransportFrames.Message emptyTopic =
        TransportFrames.replay(List.of(EMPTY, EMPTY, ZmqFrames.seq(5), PAYLOAD));
    assertThat(emptyTopic.seq()).isEqualTo(5);
    TransportFrames.Message end =
        TransportFrames.replay(
            List.of(EMPTY, EMPTY, ZmqFrames.seq(ZmqFrames.END_OF_REPLAY), EMPTY));
    assertThat(end.endOfReplay()).isTrue();
  }

  @Test
  void replayReply_malformedShapesAreRejected() {
    assertThat(TransportFrames.replay(List.of(EMPTY, PAYLOAD))).isNull();
    assertThat(TransportFrames.replay(List.of(EMPTY, TOPIC, TOPIC, ZmqFrames.seq(1), PAYLOAD)))
        .isNull();
    assertThat(TransportFrames.replay(List.of(EMPTY, new byte[3], PAYLOAD))).isNull();
  }
}
