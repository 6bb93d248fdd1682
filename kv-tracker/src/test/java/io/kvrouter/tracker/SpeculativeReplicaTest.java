package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.replica;
import static io.kvrouter.tracker.KvTrackerCoreTest.stored;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.keys.SpeculativeDecoding;
import org.junit.jupiter.api.Test;

/**
 * A replica whose agent announces an EAGLE-style speculative method is credited with the blocks its
 * engine reuses of those it holds: one fewer than it matched (vLLM recomputes the last matched
 * block for the drafter), so the predicted cached tokens are those the engine will report.
 */
class SpeculativeReplicaTest {

  private static final int[] PROMPT_TOKENS = tokens(165, 1); // 10 full blocks and 5 tokens
  private static final long[] PROMPT = KEYS.keys(PROMPT_TOKENS);

  private static Decision.Candidate routeTo(String method, int heldBlocks) {
    KvTrackerCore t = new KvTrackerCore(TrackerConfig.defaults("in-1"));
    EngineIdentity engine =
        new EngineIdentity("vllm", "0.11.0", "sha256", 16)
            .withSpeculative(SpeculativeDecoding.of(method));
    t.replicaUp(replica("a", true).with(engine, AlignmentStatus.ALIGNED));
    t.apply(stored("a", 0, PROMPT, heldBlocks));
    assertThat(t.matchedBlocks(PROMPT))
        .as("the index holds what the engine announced, method or not")
        .containsEntry("a", heldBlocks);
    Decision d = t.selectAndReserve(new RouteRequest("q", MODEL, PROMPT, 165), 1_000);
    assertThat(d.chosen()).isEqualTo("a");
    return d.ranked().get(0);
  }

  @Test
  void withoutSpeculativeDecoding_everyMatchedBlockIsCredited() {
    Decision.Candidate a = routeTo("none", 6);
    assertThat(a.matchedBlocks()).isEqualTo(6);
    assertThat(a.cachedTokens()).isEqualTo(96);
  }

  @Test
  void eagle_isCreditedOneMatchedBlockLess_andTheHitStaysFull() {
    Decision.Candidate a = routeTo("eagle", 6);
    assertThat(a.matchedBlocks()).isEqualTo(5);
    assertThat(a.cachedTokens()).isEqualTo(80);
    assertThat(a.hit()).as("not a partial hybrid hit").isNotEqualTo("partial");
  }

  @Test
  void eagle_aloneBlockHeld_isNoHit() {
    assertThat(routeTo("mtp", 1).cachedTokens()).isZero();
  }

  @Test
  void eagle_wholePromptHeld_losesThePromptsLastTokenFirst() {
    // 10 blocks of 165 tokens held: vLLM reuses at most 164 tokens (10 blocks), then drops one.
    assertThat(routeTo("eagle3", 10).cachedTokens()).isEqualTo(9 * 16);
  }
}
