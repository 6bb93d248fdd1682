package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.stored;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static io.kvrouter.tracker.KvTrackerCoreTest.tracker;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.feed.EventSequencer;
import java.util.Arrays;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AdmissionAndSnapshotTest {

  @Test
  void excludedReplicas_areNeverChosen_evenWhenTheyHoldThePrompt() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    long[] prompt = KEYS.keys(tokens(160, 1));
    t.apply(stored("a", 0, prompt, 10));

    Decision retry =
        t.selectAndReserve(new RouteRequest("q#2", MODEL, prompt, 160, Set.of("a"), true), 0);

    assertThat(retry.chosen()).isEqualTo("b");
    assertThat(retry.ranked()).extracting(Decision.Candidate::replicaId).doesNotContain("a");
  }

  @Test
  void everyCandidateExcluded_placesNothing() {
    KvTrackerCore t = tracker("in-1", "a");
    Decision d =
        t.selectAndReserve(new RouteRequest("q", MODEL, new long[0], 4, Set.of("a"), true), 0);
    assertThat(d.placed()).isFalse();
    assertThat(d.busy()).isFalse();
    assertThat(t.openReservations()).isZero();
  }

  @Test
  void admission_refusesWhenEveryReplicaIsBusy_andReservesNothing() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    int waiting = t.config().busy().waiting();
    t.loadReported(new ReplicaLoad("a", 1, 8, waiting, 0.5, 0, 0, 0));
    t.loadReported(new ReplicaLoad("b", 1, 8, 0, 0.99, 0, 0, 0));

    Decision refused =
        t.selectAndReserve(new RouteRequest("q", MODEL, new long[0], 4, Set.of(), true), 0);
    assertThat(refused.busy()).isTrue();
    assertThat(refused.placed()).isFalse();
    assertThat(t.openReservations()).isZero();

    // Without admission (the lab) the least bad busy replica is still used.
    assertThat(t.selectAndReserve(new RouteRequest("q2", MODEL, new long[0], 4), 0).placed())
        .isTrue();

    t.loadReported(new ReplicaLoad("b", 1, 1, 0, 0.1, 0, 0, 1));
    Decision placed =
        t.selectAndReserve(new RouteRequest("q3", MODEL, new long[0], 4, Set.of(), true), 0);
    assertThat(placed.chosen()).isEqualTo("b");
  }

  @Test
  void installedSnapshot_replacesTheReplicaState_andSequencingContinuesAfterIt() {
    KvTrackerCore t = tracker("in-1", "a");
    long[] old = KEYS.keys(tokens(64, 1));
    t.apply(stored("a", 0, old, 4));
    long[] fresh = KEYS.keys(tokens(64, 2));
    long[] hashes = Arrays.stream(fresh).map(k -> ~k).toArray();
    ReplicaSnapshot snapshot =
        new ReplicaSnapshot(
            "a",
            1,
            7,
            new KvEvent[] {
              new ReplicaCleared(), new BlocksStored(BlocksStored.ROOT, hashes, fresh, Tier.GPU)
            });

    t.installSnapshot(snapshot);

    assertThat(t.matchedBlocks(old).getOrDefault("a", 0)).isZero();
    assertThat(t.matchedBlocks(fresh)).containsEntry("a", 4);
    assertThat(t.digests().replicas().get("a").seq()).isEqualTo(7);
    assertThat(t.apply(stored("a", 8, fresh, 1)).outcome()).isEqualTo(EventSequencer.Outcome.APPLY);
  }
}
