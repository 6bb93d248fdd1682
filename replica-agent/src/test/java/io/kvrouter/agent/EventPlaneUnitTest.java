package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class EventPlaneUnitTest {

  private final RouterKeyFunction keys = new TrackerRouterKeys("m");
  private final int[] tokens = IntStream.range(0, 48).toArray();

  @Test
  void routerKeys_chainAcrossRunsAndDependOnModelAndLora() {
    long[] all = keys.keys(BlocksStored.ROOT, tokens, 16, null);
    assertThat(all).hasSize(3).doesNotContain(0L);
    long[] tail = keys.keys(all[0], IntStream.range(16, 48).toArray(), 16, null);
    assertThat(tail).containsExactly(all[1], all[2]);
    assertThat(new TrackerRouterKeys("other").keys(0, tokens, 16, null)[0]).isNotEqualTo(all[0]);
    assertThat(keys.keys(0, tokens, 16, "lora")[0]).isNotEqualTo(all[0]);
    assertThat(keys.keys(0, new int[20], 16, null)).hasSize(1);
  }

  @Test
  void bridge_resolvesParentsByEngineHashAndReusesKeysForEmptyTokenIds() {
    EngineKeyBridge bridge = new EngineKeyBridge(keys, 16, 100);
    long[] expected = keys.keys(0, tokens, 16, null);
    List<KvEvent> out =
        bridge.translate(
            List.of(
                stored(new long[] {101}, null, IntStream.range(0, 16).toArray(), null),
                stored(new long[] {102, 103}, 101L, IntStream.range(16, 48).toArray(), null),
                stored(new long[] {102}, null, new int[0], "CPU"), // offload, no tokens
                stored(new long[] {999}, 555L, new int[16], null), // unknown parent: dropped
                stored(new long[] {998}, null, new int[16], "WEIRD"))); // unknown medium: skipped
    assertThat(out).hasSize(3);
    BlocksStored first = (BlocksStored) out.get(0);
    assertThat(first.parentKey()).isEqualTo(BlocksStored.ROOT);
    assertThat(first.blockKeys()).containsExactly(expected[0]);
    BlocksStored second = (BlocksStored) out.get(1);
    assertThat(second.parentKey()).isEqualTo(expected[0]);
    assertThat(second.blockKeys()).containsExactly(expected[1], expected[2]);
    assertThat(second.engineHashes()).containsExactly(102, 103);
    BlocksStored offloaded = (BlocksStored) out.get(2);
    assertThat(offloaded.tier()).isEqualTo(Tier.CPU);
    assertThat(offloaded.blockKeys()).containsExactly(expected[1]);
    assertThat(bridge.unresolved()).isEqualTo(1);
    assertThat(bridge.heldBlocks(Tier.GPU)).isEqualTo(3);
  }

  @Test
  void bridge_removalAndClear_updateTheSnapshot() {
    EngineKeyBridge bridge = new EngineKeyBridge(keys, 16, 100);
    bridge.translate(List.of(stored(new long[] {1, 2, 3}, null, tokens, null)));
    List<KvEvent> removed =
        bridge.translate(List.of(new EngineEvent.BlockRemoved(new long[] {3}, null)));
    assertThat(removed).singleElement().isEqualTo(new BlocksRemoved(new long[] {3}, Tier.GPU));
    KvEvent[] snap = bridge.snapshot();
    long[] expected = keys.keys(0, tokens, 16, null);
    assertThat(snap)
        .containsExactly(
            new ReplicaCleared(),
            new BlocksStored(0, new long[] {1}, new long[] {expected[0]}, Tier.GPU),
            new BlocksStored(expected[0], new long[] {2}, new long[] {expected[1]}, Tier.GPU));
    assertThat(bridge.translate(List.of(new EngineEvent.AllBlocksCleared())))
        .containsExactly(new ReplicaCleared());
    assertThat(bridge.snapshot()).containsExactly(new ReplicaCleared());
  }

  @Test
  void log_stampsWithoutGapsAndReplaysOnlyWhatTheRingHolds() {
    StampedEventLog log = new StampedEventLog("r", 5, 3);
    for (int i = 0; i < 5; i++) {
      KvEventBatch b = log.append(new KvEvent[0]);
      assertThat(b.seq()).isEqualTo(i);
      assertThat(b.epoch()).isEqualTo(5);
      assertThat(b.replicaId()).isEqualTo("r");
    }
    assertThat(log.replay(5, 2).orElseThrow())
        .extracting(KvEventBatch::seq)
        .containsExactly(2L, 3L, 4L);
    assertThat(log.replay(5, 5).orElseThrow()).isEmpty();
    assertThat(log.replay(5, 1)).isEmpty(); // too old: snapshot
    assertThat(log.replay(4, 3)).isEmpty(); // other epoch
    log.newEpoch(6);
    assertThat(log.append(new KvEvent[0]).seq()).isZero();
    assertThat(log.replay(6, 0).orElseThrow()).hasSize(1);
  }

  @Test
  void pipeline_opensEachEpochWithReplicaClearedAndNewEpochOnRestart() {
    List<KvEventBatch> sunk = new ArrayList<>();
    ReplicaEventPipeline p = new ReplicaEventPipeline("r", keys, 16, 100, 1 << 20, sunk::add);
    p.onBatch(
        0, new EngineEventBatch(0, List.of(stored(new long[] {1}, null, new int[16], null)), 0));
    p.onBatch(1, new EngineEventBatch(0, List.of(), 0)); // translates to nothing: not stamped
    long firstEpoch = p.epoch();
    p.onEngineRestart(1, 0);
    assertThat(sunk).extracting(KvEventBatch::seq).containsExactly(0L, 1L, 0L);
    assertThat(sunk.get(0).events()).containsExactly(new ReplicaCleared());
    assertThat(sunk.get(2).epoch()).isGreaterThan(firstEpoch);
    assertThat(sunk.get(2).events()).containsExactly(new ReplicaCleared());
    assertThat(p.snapshot().events()).containsExactly(new ReplicaCleared());
    assertThat(p.replay(firstEpoch, 0)).isEmpty();
  }

  private static EngineEvent.BlockStored stored(
      long[] hashes, Long parent, int[] toks, String medium) {
    return new EngineEvent.BlockStored(hashes, parent, toks, 16, null, medium);
  }
}
