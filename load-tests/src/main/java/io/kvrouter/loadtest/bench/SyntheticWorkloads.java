package io.kvrouter.loadtest.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;

/**
 * The bench's own request sources, so a run needs no trace file: a shared-prefix workload (the case
 * a cache-aware router exists for) and a workload of unique prompts (the case where no router can
 * help).
 *
 * <p>Shared prefix follows the shape of SGLang's "generated-shared-prefix" benchmark
 * (sgl-project/sglang {@code bench_serving.py}, {@code --dataset-name generated-shared-prefix}):
 * {@code groups} system prompts, each followed by {@code promptsPerGroup} distinct questions, all
 * requests shuffled. Here the texts are {@link PseudoWords}, not model-generated text.
 *
 * <p>Cost: the group prefixes are built up front (groups × prefixWords words); each request's
 * prompt is built when the runner asks for it.
 */
public final class SyntheticWorkloads {

  private SyntheticWorkloads() {}

  /**
   * {@code groups × promptsPerGroup} requests in a seeded random order; request {@code i} of group
   * {@code g} is {@code prefix(g) + " question <i> " + suffix} with a unique suffix of {@code
   * suffixWords} words, so prompts of one group share exactly the prefix.
   */
  public static BenchRequestSource sharedPrefix(
      int groups,
      int promptsPerGroup,
      int prefixWords,
      int suffixWords,
      int maxTokens,
      ArrivalSchedule arrivals,
      long seed) {
    if (groups < 1 || promptsPerGroup < 1 || prefixWords < 0 || suffixWords < 0) {
      throw new IllegalArgumentException(
          "need groups >= 1, promptsPerGroup >= 1, word counts >= 0; got "
              + groups
              + ", "
              + promptsPerGroup
              + ", "
              + prefixWords
              + ", "
              + suffixWords);
    }
    String[] prefixes = new String[groups];
    for (int g = 0; g < groups; g++) {
      prefixes[g] = PseudoWords.words(PseudoWords.mix(seed, 1, g), prefixWords);
    }
    List<Integer> order = new ArrayList<>(groups * promptsPerGroup);
    for (int g = 0; g < groups; g++) {
      for (int p = 0; p < promptsPerGroup; p++) {
        order.add(g);
      }
    }
    Collections.shuffle(order, new Random(seed));
    int total = order.size();
    return new Lazy("shared-prefix", total) {
      @Override
      BenchRequest build(int i) {
        int g = order.get(i);
        String suffix = PseudoWords.words(PseudoWords.mix(seed, 2, i), suffixWords);
        String text = prefixes[g] + " question " + i + " " + suffix;
        return new BenchRequest(
            arrivals.nextOffsetNanos(), null, BenchPrompt.text(text), maxTokens, "g" + g);
      }
    };
  }

  /**
   * {@code count} requests with unique prompts of {@code words} pseudo-words each; every prompt
   * starts with its own number, so no two share even their first block.
   */
  public static BenchRequestSource random(
      int count, int words, int maxTokens, ArrivalSchedule arrivals, long seed) {
    if (count < 0 || words < 0) {
      throw new IllegalArgumentException(
          "count and words must be >= 0, got " + count + ", " + words);
    }
    return new Lazy("random", count) {
      @Override
      BenchRequest build(int i) {
        String text = "request " + i + " " + PseudoWords.words(PseudoWords.mix(seed, 3, i), words);
        return new BenchRequest(
            arrivals.nextOffsetNanos(), null, BenchPrompt.text(text), maxTokens, "");
      }
    };
  }

  /** A source of {@code size} requests built on demand, in index order. */
  private abstract static class Lazy implements BenchRequestSource {
    private final String name;
    private final int size;
    private int next;

    Lazy(String name, int size) {
      this.name = name;
      this.size = size;
    }

    abstract BenchRequest build(int index);

    @Override
    public String name() {
      return name;
    }

    @Override
    public int sizeHint() {
      return size;
    }

    @Override
    public boolean hasNext() {
      return next < size;
    }

    @Override
    public BenchRequest next() {
      if (next >= size) {
        throw new NoSuchElementException();
      }
      return build(next++);
    }
  }
}
