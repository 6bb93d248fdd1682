package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SyntheticWorkloadsTest {

  private static List<BenchRequest> drain(BenchRequestSource s) {
    List<BenchRequest> out = new ArrayList<>();
    s.forEachRemaining(out::add);
    return out;
  }

  private static String text(BenchRequest r) {
    return ((BenchPrompt.Text) r.prompt()).text();
  }

  @Test
  void sharedPrefix_groupsShareExactlyTheirPrefix_andTheRunIsReproducible() {
    List<BenchRequest> a =
        drain(SyntheticWorkloads.sharedPrefix(3, 4, 20, 5, 16, ArrivalSchedule.bursts(100, 0), 7));
    List<BenchRequest> b =
        drain(SyntheticWorkloads.sharedPrefix(3, 4, 20, 5, 16, ArrivalSchedule.bursts(100, 0), 7));
    assertThat(a).hasSize(12).isEqualTo(b);
    Map<String, List<String>> byGroup = new HashMap<>();
    for (BenchRequest r : a) {
      byGroup.computeIfAbsent(r.group(), k -> new ArrayList<>()).add(text(r));
      assertThat(r.maxTokens()).isEqualTo(16);
    }
    assertThat(byGroup).hasSize(3).allSatisfy((g, texts) -> assertThat(texts).hasSize(4));
    List<String> prefixes = new ArrayList<>();
    for (List<String> texts : byGroup.values()) {
      String prefix = texts.get(0).substring(0, texts.get(0).indexOf(" question "));
      assertThat(prefix.split(" ")).hasSize(20);
      assertThat(texts).allSatisfy(t -> assertThat(t).startsWith(prefix + " question "));
      assertThat(texts).doesNotHaveDuplicates();
      prefixes.add(prefix);
    }
    assertThat(prefixes).doesNotHaveDuplicates();
    // shuffled: not all of one group first
    assertThat(a.subList(0, 4))
        .extracting(BenchRequest::group)
        .doesNotContainSequence("g0", "g0", "g0", "g0");
  }

  @Test
  void random_promptsDifferFromTheirFirstWord() {
    List<BenchRequest> rs =
        drain(SyntheticWorkloads.random(5, 10, 8, ArrivalSchedule.poisson(10, 1), 3));
    assertThat(rs).hasSize(5);
    assertThat(rs).extracting(r -> text(r).split(" ")[1]).doesNotHaveDuplicates();
    assertThat(text(rs.get(0)).split(" ")).hasSize(12);
  }

  @Test
  void poisson_isNonDecreasingWithTheRequestedMeanGap() {
    ArrivalSchedule p = ArrivalSchedule.poisson(50, 42);
    long prev = 0;
    long last = 0;
    int n = 20_000;
    for (int i = 0; i < n; i++) {
      last = p.nextOffsetNanos();
      assertThat(last).isGreaterThanOrEqualTo(prev);
      prev = last;
    }
    double meanGapSeconds = last / 1e9 / n;
    assertThat(meanGapSeconds).isBetween(0.019, 0.021); // 1/50 s; deterministic for the seed
  }

  @Test
  void bursts_sendGroupsAtTheSameInstant() {
    ArrivalSchedule b = ArrivalSchedule.bursts(3, 1_000);
    long[] got = new long[7];
    for (int i = 0; i < got.length; i++) {
      got[i] = b.nextOffsetNanos();
    }
    assertThat(got).containsExactly(0, 0, 0, 1_000, 1_000, 1_000, 2_000);
  }

  @Test
  void pseudoWords_areDeterministicLowerCaseWords() {
    assertThat(PseudoWords.words(5, 8))
        .isEqualTo(PseudoWords.words(5, 8))
        .matches("[a-z]+( [a-z]+){7}");
    assertThat(PseudoWords.words(5, 8)).isNotEqualTo(PseudoWords.words(6, 8));
    assertThat(PseudoWords.words(5, 0)).isEmpty();
  }
}
