package io.kvrouter.loadtest.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The llm-d "B2B" workload of the precise-prefix-cache-aware scheduling guide (llm-d, benchmark
 * report of the precise-prefix-cache-aware guide, run with inference-perf's {@code shared_prefix}
 * data): 150 groups (tenants) × 5 prompts, each prompt a 6,000-token group prefix followed by a
 * 1,200-token per-user question, 1,000 output tokens; Poisson arrivals in stages: a warm-up of 15
 * QPS for 50 s, then 3, 10, 15, 20, 22, 25, 30, 35, 40, 43, 46, 49, 52, 55, 57, 60 QPS for 20–38 s
 * each ({@link #DEFAULT_STAGES}).
 *
 * <p>Each arrival sends one of the 750 prompts; prompts are taken in a seeded random order that is
 * reshuffled after every full pass, so every prompt recurs (the guide sizes the working set as "one
 * full set S = 750 requests" and its warm-up stage sends exactly one set). This order is our
 * choice; the guide does not pin it.
 *
 * <p>Deterministic for a seed; O(arrivals) time, ~100 bytes per request (prompts are shared
 * objects).
 */
public final class LlmdB2bWorkload {

  /** Workload name in {@link Workloads#byName}. */
  public static final String NAME = "llmd-b2b";

  private static final long NAMESPACE = 0x423242L; // "B2B"

  /** Stages of the guide's run: 15 QPS × 50 s warm-up, then the 3 → 60 QPS ladder. */
  public static final List<RateStage> DEFAULT_STAGES =
      List.of(
          new RateStage(15, 50),
          new RateStage(3, 20),
          new RateStage(10, 20),
          new RateStage(15, 20),
          new RateStage(20, 38),
          new RateStage(22, 34),
          new RateStage(25, 30),
          new RateStage(30, 25),
          new RateStage(35, 21),
          new RateStage(40, 38),
          new RateStage(43, 36),
          new RateStage(46, 33),
          new RateStage(49, 30),
          new RateStage(52, 29),
          new RateStage(55, 27),
          new RateStage(57, 26),
          new RateStage(60, 25));

  /**
   * @param groups tenants, each with its own prefix
   * @param promptsPerGroup users per tenant
   * @param systemTokens shared prefix length
   * @param questionTokens per-user question length
   * @param outputTokens output length of every request
   * @param stages arrival schedule
   */
  public record Config(
      int groups,
      int promptsPerGroup,
      int systemTokens,
      int questionTokens,
      int outputTokens,
      List<RateStage> stages)
      implements SharedPrefixPrompts.Shape {

    /** The guide's figures. */
    public static final Config DEFAULTS = new Config(150, 5, 6000, 1200, 1000, DEFAULT_STAGES);

    public Config {
      stages = List.copyOf(stages);
      if (groups <= 0
          || promptsPerGroup <= 0
          || systemTokens <= 0
          || questionTokens <= 0
          || outputTokens < 0
          || stages.isEmpty()) {
        throw new IllegalArgumentException(
            "invalid "
                + NAME
                + " config: "
                + groups
                + " groups, "
                + promptsPerGroup
                + " prompts, "
                + systemTokens
                + "+"
                + questionTokens
                + " tokens, "
                + outputTokens
                + " out, "
                + stages.size()
                + " stages");
      }
    }

    /**
     * The same config with every stage's duration multiplied by {@code factor} (to shorten a lab
     * run).
     */
    public Config scaleDurations(double factor) {
      List<RateStage> scaled = new ArrayList<>(stages.size());
      for (RateStage s : stages) {
        scaled.add(new RateStage(s.qps(), s.seconds() * factor));
      }
      return new Config(
          groups, promptsPerGroup, systemTokens, questionTokens, outputTokens, scaled);
    }
  }

  private LlmdB2bWorkload() {}

  /** Generates the workload. */
  public static Workload generate(Config config, long seed) {
    List<WorkloadRequest> prompts =
        SharedPrefixPrompts.grid(new TokenExpander(seed), NAMESPACE, config);
    SplittableRandom random = new SplittableRandom(seed ^ NAMESPACE);
    long[] arrivals = PoissonArrivals.staged(config.stages(), random.split());
    List<WorkloadRequest> order = new ArrayList<>(prompts);
    List<WorkloadRequest> requests = new ArrayList<>(arrivals.length);
    for (int i = 0; i < arrivals.length; i++) {
      int inPass = i % order.size();
      if (inPass == 0) {
        GeneratedSharedPrefixWorkload.shuffle(order, random);
      }
      requests.add(order.get(inPass).withIndexAndArrival(i, arrivals[i]));
    }
    return Workload.of(NAME, seed, 0, requests);
  }
}
