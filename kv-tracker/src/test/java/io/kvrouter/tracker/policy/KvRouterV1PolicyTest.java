package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Tier;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KvRouterV1PolicyTest {

  private static final long[] PROMPT = Fixture.prompt(1, 64); // 1,024 tokens

  @Test
  void prefersTheCachedReplica_untilItsLoadMakesThatABadDeal() {
    Fixture f = new Fixture(2);
    f.cache(0, PROMPT, 64, Tier.GPU);
    Policy p = Fixture.policy("kvrouter_v1", 1);
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(0);

    // Prefill queued on the cached replica: still worth it while the queue is shorter than
    // recomputing the whole prompt elsewhere (1,024 · (1 + 1,024/36,000) ≈ 1,053 tokens).
    f.prefill[0] = 800;
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(0);
    f.prefill[0] = 1_300;
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(1);

    // The same with decode load (weight 0.05 per token held).
    f.prefill[0] = 0;
    f.decode[0] = 15_000; // 750
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(0);
    f.decode[0] = 40_000; // 2,000
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(1);
  }

  @Test
  void busyReplica_isRankedLast_evenWithTheWholePromptCached() {
    Fixture f = new Fixture(3);
    f.cache(0, PROMPT, 64, Tier.GPU);
    Policy p = Fixture.policy("kvrouter_v1", 1);
    f.kv[0] = 0.99;
    assertThat(f.rank(p, PROMPT)[2]).isEqualTo(0);
    f.kv[0] = 0.2;
    f.waiting[0] = 64;
    assertThat(f.rank(p, PROMPT)[2]).isEqualTo(0);
  }

  @Test
  void allBusy_stillRanksByCost() {
    Fixture f = new Fixture(2);
    f.cache(1, PROMPT, 64, Tier.GPU);
    f.kv[0] = 0.99;
    f.kv[1] = 0.99;
    assertThat(f.rank(Fixture.policy("kvrouter_v1", 1), PROMPT)[0]).isEqualTo(1);
  }

  @Test
  void tierCredit_gpuBeatsCpuBeatsDiskBeatsNothing() {
    Fixture f = new Fixture(4);
    f.cache(0, PROMPT, 64, Tier.DISK);
    f.cache(1, PROMPT, 64, Tier.CPU);
    f.cache(2, PROMPT, 64, Tier.GPU);
    assertThat(f.rank(Fixture.policy("kvrouter_v1", 1), PROMPT)).containsExactly(2, 1, 0, 3);
  }

  @Test
  void nearTies_areSpreadAtRandom_soRoutersDoNotHerd() {
    Fixture f = new Fixture(4);
    Policy p = Fixture.policy("kvrouter_v1", 9);
    Map<Integer, Integer> picks = new HashMap<>();
    for (int i = 0; i < 400; i++) {
      picks.merge(f.rank(p, PROMPT)[0], 1, Integer::sum);
    }
    assertThat(picks).hasSize(4);
    assertThat(picks.values()).allSatisfy(c -> assertThat(c).isGreaterThan(50));
  }

  @Test
  void clearWinner_outsideTheTieBand_isAlwaysChosen() {
    Fixture f = new Fixture(4);
    f.cache(3, PROMPT, 32, Tier.GPU); // saves 512 tokens, far beyond the 64-token band
    Policy p = Fixture.policy("kvrouter_v1", 9);
    for (int i = 0; i < 100; i++) {
      assertThat(f.rank(p, PROMPT)[0]).isEqualTo(3);
    }
  }
}
