package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Visibility;
import org.junit.jupiter.api.Test;

class VllmRouterKvPolicyTest {

  private static final long[] PROMPT = Fixture.prompt(1, 10);

  /**
   * Replicas 1 and 2 hold the first 5 blocks, replica 3 the first 3; replica 2 has two requests of
   * this router still in prefill. The longest prefix wins whatever the load, and of equal prefixes
   * the last worker in the list ({@code max_by_key}), so replica 2. Taking the first of equals, or
   * letting load break the tie, gives replica 1.
   */
  @Test
  void theLongestPrefix_winsWhateverTheLoad_andEqualPrefixesGoToTheLastWorker() {
    Fixture f =
        new Fixture(4)
            .holding(PROMPT, new int[] {0, 5, 5, 3}, Tier.GPU, Tier.GPU, Tier.GPU, Tier.GPU);
    Policy p = Fixture.policy("vllm_router_kv", 1);
    f.running(p, "a", Fixture.prompt(500, 2), 2);
    f.running(p, "b", Fixture.prompt(600, 2), 2);

    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(2);
  }

  /**
   * With no events anywhere, the first request is a miss and goes to the least loaded worker, the
   * first of equals (replica 0); the speculative entries it leaves send the same prompt back to
   * replica 0 for 2 s, busy or not (q2 scores all ten blocks there, so it writes none and does not
   * renew them). After the TTL the prompt is a miss again and goes to replica 1, the first of those
   * with no request in prefill. Once replica 0's requests have their first token, it is the least
   * loaded again.
   */
  @Test
  void aMiss_goesToTheLeastLoaded_andSpeculationKeepsItsPromptThereFor2Seconds() {
    Fixture f = new Fixture(3);
    Policy p = Fixture.policy("vllm_router_kv", 1);

    assertThat(f.route(p, PROMPT, "q1")).isEqualTo(0);
    f.now += 2_000; // the entries' last live instant
    assertThat(f.route(p, PROMPT, "q2")).isEqualTo(0);
    f.now += 1;
    assertThat(f.route(p, PROMPT, "q3")).isEqualTo(1);

    f.now += 2_001;
    for (String id : new String[] {"q1", "q2", "q3"}) {
      p.onPrefillCompleted(id, f.now);
    }
    assertThat(f.route(p, Fixture.prompt(900, 4), "q4")).isEqualTo(0);
  }

  @Test
  void sees_itsOwnRequests_andConfirmedBlocksOnly_asOneRouterOfMany() {
    Visibility v = Fixture.policy("vllm_router_kv", 1).visibility();
    assertThat(v.peerReservations()).isFalse();
    assertThat(v.predictedBlocks()).isFalse();
    assertThat(v.globalScheduler()).isFalse();
  }
}
