package io.kvrouter.tracker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.feed.EventSequencer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * A tracker fed batches duplicated and out of order, with every gap repaired by a replay from the
 * seq it asks for (what the event plane will do), ends in exactly the state of a tracker fed the
 * same streams in order: same digests, same matches.
 */
class EventOrderingPropertiesTest {

  private static final String[] REPLICAS = {"a", "b", "c"};

  private static List<List<KvEventBatch>> streams(Random rnd, int batchesPerReplica) {
    List<List<KvEventBatch>> out = new ArrayList<>();
    for (String replica : REPLICAS) {
      List<KvEventBatch> stream = new ArrayList<>();
      for (int seq = 0; seq < batchesPerReplica; seq++) {
        int events = 1 + rnd.nextInt(3);
        KvEvent[] ev = new KvEvent[events];
        for (int e = 0; e < events; e++) {
          int kind = rnd.nextInt(20);
          Tier tier = rnd.nextInt(4) == 0 ? Tier.CPU : Tier.GPU;
          if (kind < 12) {
            int n = 1 + rnd.nextInt(4);
            long[] keys = new long[n];
            long[] hashes = new long[n];
            for (int i = 0; i < n; i++) {
              keys[i] = 1 + rnd.nextInt(30);
              hashes[i] = keys[i] * 101;
            }
            ev[e] = new BlocksStored(BlocksStored.ROOT, hashes, keys, tier);
          } else if (kind < 19) {
            int n = 1 + rnd.nextInt(4);
            long[] hashes = new long[n];
            for (int i = 0; i < n; i++) {
              hashes[i] = (1 + rnd.nextInt(30)) * 101L;
            }
            ev[e] = new BlocksRemoved(hashes, tier);
          } else {
            ev[e] = new ReplicaCleared();
          }
        }
        stream.add(new KvEventBatch(replica, 1, seq, ev));
      }
      out.add(stream);
    }
    return out;
  }

  @Property(tries = 300)
  void duplicatedAndReorderedDelivery_withReplayOnGap_endsInTheInOrderState(
      @ForAll long seed, @ForAll @IntRange(min = 1, max = 25) int batches) {
    Random rnd = new Random(seed);
    List<List<KvEventBatch>> streams = streams(rnd, batches);
    KvTrackerCore inOrder = KvTrackerCoreTest.tracker("x", REPLICAS);
    streams.forEach(s -> s.forEach(inOrder::apply));

    KvTrackerCore messy = KvTrackerCoreTest.tracker("y", REPLICAS);
    int[] sent = new int[REPLICAS.length]; // how far each stream was published
    int replays = 0;
    while (true) {
      int r = rnd.nextInt(REPLICAS.length);
      List<KvEventBatch> stream = streams.get(r);
      if (sent[r] < stream.size()) {
        sent[r]++;
      }
      // deliver a random recent batch: the newest, an older duplicate, or skip ahead
      int pick = Math.max(0, sent[r] - 1 - rnd.nextInt(3));
      if (rnd.nextInt(4) == 0 && sent[r] < stream.size()) {
        pick = Math.min(stream.size() - 1, sent[r] + rnd.nextInt(2)); // arrives early
      }
      EventSequencer.Verdict v = messy.apply(stream.get(pick));
      if (v.outcome() == EventSequencer.Outcome.GAP) {
        replays++;
        for (long s = v.expectedSeq(); s < Math.max(sent[r], pick + 1); s++) {
          messy.apply(stream.get((int) s)); // the agent's replay, in order
        }
      }
      boolean done = true;
      for (int i = 0; i < REPLICAS.length; i++) {
        EventSequencer.Watermark w =
            new EventSequencer.Watermark(
                messy.digests().replicas().get(REPLICAS[i]).epoch(),
                messy.digests().replicas().get(REPLICAS[i]).seq());
        done &= w.seq() == streams.get(i).size() - 1;
      }
      if (done) {
        break;
      }
    }
    assertThat(messy.digests().replicas()).isEqualTo(inOrder.digests().replicas());
    for (long k = 1; k <= 30; k++) {
      long[] prompt = {k};
      assertThat(messy.matchedBlocks(prompt)).isEqualTo(inOrder.matchedBlocks(prompt));
    }
    net.jqwik.api.statistics.Statistics.label("replayed").collect(replays > 0);
  }
}
