package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplayReply;
import io.kvrouter.protocol.Replayed;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * What an agent answers a tracker's replay request with: a bounded run of the batches it missed
 * while the ring holds them, a snapshot once it does not, and an empty replay without an event
 * plane.
 */
class AgentEventPlaneTest {

  private static RequestReplay ask(long epoch, long fromSeq) {
    return new RequestReplay("r", epoch, fromSeq, null);
  }

  private static ReplicaEventPipeline pipelineWithBatches(int stored) {
    ReplicaEventPipeline p =
        new ReplicaEventPipeline("r", new TrackerRouterKeys("m"), 16, 100, 1 << 10, b -> {});
    for (int i = 0; i < stored; i++) {
      int[] tokens = IntStream.range(i * 16, i * 16 + 16).toArray();
      EngineEvent e = new EngineEvent.BlockStored(new long[] {i + 1}, null, tokens, 16, null, null);
      p.onBatch(i, new EngineEventBatch(0, List.of(e), 0));
    }
    return p;
  }

  @Test
  void replay_isCappedAtMaxBatches_fromTheSequenceAskedFor() {
    ReplicaEventPipeline pipeline = pipelineWithBatches(5); // seq 0 opens the epoch, then 1..5
    var plane = new AgentEventPlane.Streamed(pipeline, null, null);
    ReplayReply reply = plane.replay(ask(pipeline.epoch(), 2), 3);
    assertThat(reply).isInstanceOf(Replayed.class);
    assertThat(((Replayed) reply).batches())
        .extracting(KvEventBatch::seq)
        .containsExactly(2L, 3L, 4L);
    assertThat(((Replayed) plane.replay(ask(pipeline.epoch(), 5), 3)).batches()).hasSize(1);
  }

  @Test
  void replay_ofAnUnknownEpoch_isASnapshot() {
    ReplicaEventPipeline pipeline = pipelineWithBatches(2);
    var plane = new AgentEventPlane.Streamed(pipeline, null, null);
    ReplayReply reply = plane.replay(ask(Long.MIN_VALUE, 0), 3);
    assertThat(reply).isInstanceOf(SnapshotReply.class);
    assertThat(((SnapshotReply) reply).snapshot().events()).hasSize(3); // cleared + 2 blocks
  }

  @Test
  void withoutAnEventPlane_replayIsEmptyAndLoadIsUnstamped() {
    Replayed reply = (Replayed) AgentEventPlane.NONE.replay(ask(7, 3), 3);
    assertThat(reply.replicaId()).isEqualTo("r");
    assertThat(reply.epoch()).isEqualTo(7);
    assertThat(reply.batches()).isEmpty();
    assertThat(AgentEventPlane.NONE.epoch()).isZero();
  }
}
