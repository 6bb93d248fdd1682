package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class TokenExpanderTest {

  @Property(tries = 200)
  void tokens_areInVocabularyRange_andAPureFunctionOfSeedKeyAndPosition(
      @ForAll long seed, @ForAll long key, @ForAll @IntRange(min = 1, max = 600) int n) {
    int[] a = new TokenExpander(seed).tokens(key, n);
    int[] b = new TokenExpander(seed).tokens(key, n);
    assertThat(b).containsExactly(a);
    assertThat(Arrays.stream(a).min().getAsInt()).isNotNegative();
    assertThat(Arrays.stream(a).max().getAsInt()).isLessThan(TokenExpander.VOCAB_SIZE);
    assertThat(new TokenExpander(seed).tokenAt(key, n - 1)).isEqualTo(a[n - 1]);
  }

  @Property(tries = 200)
  void differentKeys_neverShareTheFirst16Tokens(
      @ForAll long seed, @ForAll long k1, @ForAll long k2) {
    if (k1 == k2) {
      return;
    }
    TokenExpander e = new TokenExpander(seed);
    assertThat(e.tokens(k1, 16)).isNotEqualTo(e.tokens(k2, 16));
  }

  @Property(tries = 100)
  void promptsWithEqualLeadingSegments_haveEqualTokenPrefixes(
      @ForAll long seed,
      @ForAll @IntRange(min = 1, max = 300) int shared,
      @ForAll @IntRange(min = 1, max = 300) int tailA,
      @ForAll @IntRange(min = 1, max = 300) int tailB) {
    TokenExpander e = new TokenExpander(seed);
    PromptTokens a = PromptTokens.empty(e).extend(42, shared).extend(1, tailA);
    PromptTokens b = PromptTokens.empty(e).extend(42, shared).extend(2, tailB);
    int[] ta = a.toArray();
    int[] tb = b.toArray();
    assertThat(Arrays.copyOf(ta, shared)).containsExactly(Arrays.copyOf(tb, shared));
    assertThat(ta[shared]).isNotEqualTo(tb[shared]);
    assertThat(a.prefix(shared + 1)).containsExactly(Arrays.copyOf(ta, shared + 1));
  }

  @Property(tries = 50)
  void otherSeed_givesOtherTokens(@ForAll long seed, @ForAll long key) {
    assertThat(new TokenExpander(seed).tokens(key, 16))
        .isNotEqualTo(new TokenExpander(seed + 1).tokens(key, 16));
  }

  @Property(tries = 20)
  void tokenIds_spreadOverTheWholeVocabulary(@ForAll long seed) {
    int[] t = new TokenExpander(seed).tokens(7, 20_000);
    long low = Arrays.stream(t).filter(x -> x < TokenExpander.VOCAB_SIZE / 2).count();
    assertThat(low).isBetween(9_500L, 10_500L);
    assertThat(Arrays.stream(t).distinct().count()).isGreaterThan(18_000);
  }
}
