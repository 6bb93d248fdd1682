package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.replica;
import static io.kvrouter.tracker.KvTrackerCoreTest.stored;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.ReplicaInfo;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A replica its agent announced unaligned is flagged, not trusted: it stays a candidate, but its
 * index never earns it a cache hit, so it is chosen by load alone.
 */
class UnalignedReplicaTest {

  private static final long[] PROMPT = KEYS.keys(tokens(160, 1)); // 10 blocks

  private static ReplicaInfo announced(String id, AlignmentStatus alignment) {
    return replica(id, true).with(EngineIdentity.NOTHING_KNOWN, alignment);
  }

  /**
   * Replica "b" holds 6 of the prompt's 10 blocks and already serves one short request; "a" holds
   * nothing and serves nothing. A trusted "b" wins on its cache hit despite its load.
   */
  private static KvTrackerCore trackerWhereBHoldsThePrompt(AlignmentStatus bAlignment) {
    KvTrackerCore t = new KvTrackerCore(TrackerConfig.defaults("in-1"));
    t.replicaUp(announced("a", AlignmentStatus.ALIGNED));
    t.replicaUp(announced("b", bAlignment));
    t.apply(stored("b", 0, PROMPT, 6));
    Decision busy =
        t.selectAndReserve(
            new RouteRequest("short", MODEL, KEYS.keys(tokens(16, 2)), 16, Set.of("a"), false),
            1_000);
    assertThat(busy.chosen()).isEqualTo("b");
    return t;
  }

  @Test
  void alignedReplica_winsOnItsCacheHit() {
    KvTrackerCore t = trackerWhereBHoldsThePrompt(AlignmentStatus.ALIGNED);

    Decision d = t.selectAndReserve(new RouteRequest("q", MODEL, PROMPT, 160), 1_001);

    assertThat(d.chosen()).isEqualTo("b");
    assertThat(d.reserved().prefillTokens()).isEqualTo(160 - 96);
  }

  @Test
  void unalignedReplica_getsNoCacheHitPreference_evenWhenItsIndexMatches() {
    KvTrackerCore t =
        trackerWhereBHoldsThePrompt(AlignmentStatus.unaligned("block size: 32 against 16"));

    Decision d = t.selectAndReserve(new RouteRequest("q", MODEL, PROMPT, 160), 1_001);

    assertThat(d.chosen()).as("the less loaded replica, b's cache hit not believed").isEqualTo("a");
    Decision.Candidate b =
        d.ranked().stream().filter(c -> c.replicaId().equals("b")).findFirst().orElseThrow();
    assertThat(b.matchedBlocks()).isZero();
    assertThat(b.cachedTokens()).isZero();
    assertThat(t.matchedBlocks(PROMPT))
        .as("its events are still applied: every tracker keeps the same picture of it")
        .containsEntry("b", 6);
  }

  @Test
  void unalignedReplica_isTrustedAgain_onceItsAgentAnnouncesItAligned() {
    KvTrackerCore t = trackerWhereBHoldsThePrompt(AlignmentStatus.unaligned("tokenizer"));
    t.replicaUp(announced("b", AlignmentStatus.ALIGNED));

    Decision d = t.selectAndReserve(new RouteRequest("q", MODEL, PROMPT, 160), 1_001);

    assertThat(d.chosen()).isEqualTo("b");
  }
}
