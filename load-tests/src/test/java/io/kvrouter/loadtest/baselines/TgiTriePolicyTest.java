package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TgiTriePolicyTest {

  /**
   * After prompts starting 10, 20 and 30, a prompt starting 40 ranks last of four: x lies in [0.75,
   * 1), so it goes to the last of four backends whatever its load; kvrouter sends it to an idle
   * replica. A prompt starting 5 then ranks first of five: x in [0, 0.2), the first backend.
   */
  @Test
  void mapsThePromptsRankAmongAllPromptsSoFar_toFloorOfXTimesBackends_ignoringLoad() {
    Fixture f = new Fixture(4);
    Policy p = Fixture.policy("tgi_trie", 3);
    for (long first : new long[] {10, 20, 30}) {
      f.route(p, new long[] {first, 1, 2});
    }
    f.inFlight[3] = 1_000;
    f.prefill[3] = 100_000;
    long[] last = {40, 1, 2};
    assertThat(f.route(p, last)).isEqualTo(3);
    assertThat(f.kvrouterPick(last)).isNotEqualTo(3);
    assertThat(f.route(p, new long[] {5, 1, 2})).isEqualTo(0);
  }

  @Test
  void promptsSharingAPrefix_sitTogetherInTheOrder_andLandTogether() {
    Fixture f = new Fixture(4);
    Policy p = Fixture.policy("tgi_trie", 1);
    SplittableRandom random = new SplittableRandom(9);
    for (int i = 0; i < 200; i++) {
      f.route(p, new long[] {random.nextLong(), 1}); // spread over the key space
    }
    int together = 0;
    for (int i = 0; i < 50; i++) {
      long[] a = {0x7000_0000_0000_0000L + i * 1_000_003L, 5, 6, 7};
      long[] b = {a[0], 5, 6, 8}; // shares three of four blocks: adjacent in the order
      together += f.route(p, a) == f.route(p, b) ? 1 : 0;
    }
    assertThat(together).isGreaterThan(40);
  }

  @Test
  void rankTrie_givesTheRangeOfEqualEntriesInLexicographicOrder_likeASortedList() {
    SplittableRandom random = new SplittableRandom(5);
    RankTrie trie = new RankTrie();
    List<long[]> all = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      long[] key = new long[random.nextInt(0, 5)];
      for (int j = 0; j < key.length; j++) {
        key[j] = random.nextInt(0, 3) - 1; // -1 sorts last, unsigned
      }
      all.add(key);
      long less = all.stream().filter(k -> compare(k, key) < 0).count();
      long equal = all.stream().filter(k -> compare(k, key) == 0).count();
      RankTrie.Range r = trie.insert(key, key.length);
      assertThat(r).as("entry %d", i).isEqualTo(new RankTrie.Range(less, less + equal));
      assertThat(trie.count()).isEqualTo(i + 1);
    }
  }

  /** Shorter first when one is a prefix of the other; else by the first difference, unsigned. */
  private static int compare(long[] a, long[] b) {
    for (int i = 0; i < Math.min(a.length, b.length); i++) {
      int c = Long.compareUnsigned(a[i], b[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.length, b.length);
  }
}
