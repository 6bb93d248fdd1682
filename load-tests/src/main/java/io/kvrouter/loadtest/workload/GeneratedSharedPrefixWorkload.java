package io.kvrouter.loadtest.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * SGLang's {@code generated-shared-prefix} benchmark workload (sgl-project/sglang, {@code
 * python/sglang/bench_serving.py}, dataset {@code generated-shared-prefix}; defaults 64 groups × 16
 * prompts, 2,048-token system prompt, 128-token question, 256 output tokens): every group has its
 * own system prompt, each prompt is that system prompt followed by its own question, and the
 * prompts are shuffled before sending, as bench_serving does. Arrivals: all at time 0
 * (bench_serving's default request rate {@code inf}) or Poisson at {@code qps}.
 *
 * <p>Differences from the original, on purpose: lengths are exact token counts (bench_serving
 * decodes random tokens to text and joins system prompt and question with a blank line, so its
 * counts drift by a few tokens); token ids come from {@link TokenExpander}.
 *
 * <p>Deterministic for a seed; O(groups × prompts) time and memory.
 */
public final class GeneratedSharedPrefixWorkload {

  /** Workload name in {@link Workloads#byName}. */
  public static final String NAME = "sglang-gsp";

  private static final long NAMESPACE = 0x675350L; // "gSP"

  /**
   * @param groups number of groups (distinct system prompts)
   * @param promptsPerGroup prompts per group
   * @param systemTokens shared system prompt length
   * @param questionTokens question length
   * @param outputTokens output length of every request
   * @param qps Poisson arrival rate, {@code Double.POSITIVE_INFINITY} for all at once
   */
  public record Config(
      int groups,
      int promptsPerGroup,
      int systemTokens,
      int questionTokens,
      int outputTokens,
      double qps)
      implements SharedPrefixPrompts.Shape {

    /** SGLang bench_serving's defaults, all requests at once. */
    public static final Config DEFAULTS =
        new Config(64, 16, 2048, 128, 256, Double.POSITIVE_INFINITY);

    public Config {
      if (groups <= 0
          || promptsPerGroup <= 0
          || systemTokens <= 0
          || questionTokens <= 0
          || outputTokens < 0
          || !(qps > 0)) {
        throw new IllegalArgumentException("invalid " + NAME + " config: " + this);
      }
    }
  }

  private GeneratedSharedPrefixWorkload() {}

  /** Generates the workload. */
  public static Workload generate(Config config, long seed) {
    List<WorkloadRequest> requests =
        SharedPrefixPrompts.grid(new TokenExpander(seed), NAMESPACE, config);
    SplittableRandom random = new SplittableRandom(seed ^ NAMESPACE);
    shuffle(requests, random);
    long[] arrivals = PoissonArrivals.constantRate(requests.size(), config.qps(), random);
    List<WorkloadRequest> timed = new ArrayList<>(requests.size());
    for (int i = 0; i < requests.size(); i++) {
      timed.add(requests.get(i).withIndexAndArrival(i, arrivals[i]));
    }
    return Workload.of(NAME, seed, 0, timed);
  }

  /** Fisher–Yates shuffle driven by {@code random}. */
  static <T> void shuffle(List<T> list, SplittableRandom random) {
    for (int i = list.size() - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      T tmp = list.get(i);
      list.set(i, list.get(j));
      list.set(j, tmp);
    }
  }
}
