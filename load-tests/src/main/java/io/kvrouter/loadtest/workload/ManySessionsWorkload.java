package io.kvrouter.loadtest.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Many short chat sessions, the shape of the load SMG measured its shared index with (smg pull
 * request #2438: 240 workers behind 8 gateways, 611 sessions/s, about 823 requests/s, so 1.35
 * requests per session; "follow-up" requests are those after a session's first). The knobs are
 * named after SMG's simulation load generator's flags ({@code t2_ratio}, {@code think_secs}, {@code
 * max_turns}, {@code system_prefix_tokens}, {@code system_prefix_pool}; smg pull request #2439,
 * {@code crates/sim_loadgen/src/report.rs}); their values here are ours, not SMG's, which the pull
 * request does not publish.
 *
 * <p>A session opens with one of {@code systemPrefixPool} system prompts of {@code
 * systemPrefixTokens} tokens (drawn uniformly) and a user message; after each turn it goes on to
 * another with probability {@code t2Ratio}, up to {@code maxTurns} turns, so a session has 1 / (1 −
 * t2Ratio) turns on average when {@code maxTurns} is large (0.26 gives SMG's 1.35). A follow-up's
 * prompt is the previous turn's prompt, its answer and a new user message, token for token.
 * Sessions start as a Poisson process at {@code sessionQps}; a follow-up arrives a think time after
 * the previous turn's arrival, uniform in [thinkSeconds/2, 3·thinkSeconds/2] (so the previous
 * answer is usually done, as a user who reads it first). User message and answer lengths are
 * uniform in [mean/2, 3·mean/2]. Each request carries its answer's tokens ({@link
 * WorkloadRequest#answered}), so a lab engine caches the blocks it generates, which the session's
 * next turn then finds.
 *
 * <p>Deterministic for a seed; O(requests × turns) segment copies, no token ids held.
 */
public final class ManySessionsWorkload {

  /** Workload name in {@link Workloads#byName}. */
  public static final String NAME = "many-sessions";

  private static final long NAMESPACE = 0x4d414e59L; // "MANY"

  /**
   * @param sessions sessions started
   * @param sessionQps session start rate (Poisson)
   * @param t2Ratio chance a session goes on to its next turn, in [0, 1)
   * @param maxTurns turns a session has at most
   * @param thinkSeconds mean time between a session's consecutive turns
   * @param systemPrefixTokens tokens of each system prompt
   * @param systemPrefixPool distinct system prompts the sessions draw from
   * @param userTokens mean user message length
   * @param answerTokens mean answer (output) length
   */
  public record Config(
      int sessions,
      double sessionQps,
      double t2Ratio,
      int maxTurns,
      double thinkSeconds,
      int systemPrefixTokens,
      int systemPrefixPool,
      int userTokens,
      int answerTokens) {

    /**
     * 20,000 sessions at 100/s, t2Ratio 0.26 (SMG's 1.35 requests per session), up to 8 turns, 10 s
     * think, 64 system prompts of 1,024 tokens, 256-token messages and answers.
     */
    public static final Config DEFAULTS = new Config(20_000, 100, 0.26, 8, 10, 1024, 64, 256, 256);

    public Config {
      if (sessions <= 0
          || !(sessionQps > 0)
          || Double.isInfinite(sessionQps)
          || !(t2Ratio >= 0 && t2Ratio < 1)
          || maxTurns <= 0
          || !(thinkSeconds > 0)
          || Double.isInfinite(thinkSeconds)
          || systemPrefixTokens <= 0
          || systemPrefixPool <= 0
          || userTokens <= 0
          || answerTokens <= 0) {
        throw new IllegalArgumentException("invalid " + NAME + " config: " + this);
      }
    }
  }

  private ManySessionsWorkload() {}

  /** Generates the workload. */
  public static Workload generate(Config config, long seed) {
    TokenExpander expander = new TokenExpander(seed);
    SplittableRandom random = new SplittableRandom(seed ^ NAMESPACE);
    long[] starts =
        PoissonArrivals.constantRate(config.sessions(), config.sessionQps(), random.split());
    List<WorkloadRequest> requests = new ArrayList<>();
    for (int s = 0; s < config.sessions(); s++) {
      String session = "s-" + s;
      int system = random.nextInt(config.systemPrefixPool());
      PromptTokens prompt =
          PromptTokens.empty(expander)
              .extend(TokenExpander.key(NAMESPACE, 0, system), config.systemPrefixTokens());
      double arrivalSeconds = starts[s] / 1e6;
      for (int t = 0; t < config.maxTurns(); t++) {
        if (t > 0) {
          if (random.nextDouble() >= config.t2Ratio()) {
            break;
          }
          arrivalSeconds += config.thinkSeconds() * (0.5 + random.nextDouble());
        }
        prompt =
            prompt.extend(
                TokenExpander.key(NAMESPACE, 1, s, t),
                MultiTurnChatWorkload.around(config.userTokens(), random));
        int answer = MultiTurnChatWorkload.around(config.answerTokens(), random);
        PromptTokens answered = prompt.extend(TokenExpander.key(NAMESPACE, 2, s, t), answer);
        requests.add(
            new WorkloadRequest(
                0, (long) (arrivalSeconds * 1e6), session, t, prompt, answer, null, answered));
        prompt = answered;
      }
    }
    // Segment 0 is the system prompt, segment 1 the first user message.
    return Workload.of(NAME, seed, 0, requests).withFirstUserSegment(1);
  }
}
