package io.kvrouter.loadtest.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Multi-turn chat sessions: every session starts with a system prompt shared by all sessions and a
 * user message; turn {@code t + 1}'s prompt is turn {@code t}'s prompt, then turn {@code t}'s
 * answer ({@code outputLength} tokens, one segment), then a new user message. So a turn's prompt
 * extends the previous turn's prompt and answer token for token, the reuse pattern of chat traffic
 * that cache-aware routing must keep on one replica.
 *
 * <p>Arrivals (open loop): sessions start as a Poisson process at {@code sessionQps}; each next
 * turn arrives an exponential think time (mean {@code thinkSeconds}) after the previous turn's
 * arrival. A closed-loop replayer that waits for the answer can add the think time to the
 * completion instead; the order of turns within a session is the same either way. User message and
 * answer lengths are uniform in {@code [mean/2, 3·mean/2]}. These shapes are our own choice, not a
 * published generator.
 *
 * <p>Deterministic for a seed; O(sessions × turns²) segment copies (prompts are segment lists), no
 * token ids held.
 */
public final class MultiTurnChatWorkload {

  /** Workload name in {@link Workloads#byName}. */
  public static final String NAME = "multi-turn-chat";

  private static final long NAMESPACE = 0x43484154L; // "CHAT"

  /**
   * @param sessions number of chat sessions
   * @param turns turns per session
   * @param systemTokens system prompt shared by all sessions
   * @param userTokens mean user message length
   * @param answerTokens mean answer (output) length
   * @param sessionQps session start rate
   * @param thinkSeconds mean time between a session's consecutive turns
   */
  public record Config(
      int sessions,
      int turns,
      int systemTokens,
      int userTokens,
      int answerTokens,
      double sessionQps,
      double thinkSeconds) {

    /**
     * 64 sessions × 8 turns, 1,024-token system prompt, 256-token messages and answers, 1
     * session/s, 10 s think.
     */
    public static final Config DEFAULTS = new Config(64, 8, 1024, 256, 256, 1.0, 10.0);

    public Config {
      if (sessions <= 0
          || turns <= 0
          || systemTokens <= 0
          || userTokens <= 0
          || answerTokens <= 0
          || !(sessionQps > 0)
          || !(thinkSeconds > 0)
          || Double.isInfinite(thinkSeconds)) {
        throw new IllegalArgumentException("invalid " + NAME + " config: " + this);
      }
    }
  }

  private MultiTurnChatWorkload() {}

  /** Generates the workload. */
  public static Workload generate(Config config, long seed) {
    TokenExpander expander = new TokenExpander(seed);
    SplittableRandom random = new SplittableRandom(seed ^ NAMESPACE);
    long[] starts =
        PoissonArrivals.constantRate(config.sessions(), config.sessionQps(), random.split());
    long systemKey = TokenExpander.key(NAMESPACE, 0);
    List<WorkloadRequest> requests = new ArrayList<>(config.sessions() * config.turns());
    for (int s = 0; s < config.sessions(); s++) {
      String session = "chat-" + s;
      PromptTokens prompt = PromptTokens.empty(expander).extend(systemKey, config.systemTokens());
      double arrivalSeconds = starts[s] / 1e6;
      for (int t = 0; t < config.turns(); t++) {
        if (t > 0) {
          arrivalSeconds += PoissonArrivals.exponential(random, 1.0 / config.thinkSeconds());
        }
        prompt =
            prompt.extend(
                TokenExpander.key(NAMESPACE, 1, s, t), around(config.userTokens(), random));
        int answer = around(config.answerTokens(), random);
        requests.add(
            new WorkloadRequest(
                0, (long) (arrivalSeconds * 1e6), session, t, prompt, answer, null));
        prompt = prompt.extend(TokenExpander.key(NAMESPACE, 2, s, t), answer);
      }
    }
    // Segment 0 is the system prompt, segment 1 the first user message.
    return Workload.of(NAME, seed, 0, requests).withFirstUserSegment(1);
  }

  /** Uniform integer in {@code [mean/2, 3·mean/2]}, at least 1. */
  static int around(int mean, SplittableRandom random) {
    int lo = Math.max(1, mean / 2);
    int hi = Math.max(lo, mean + mean / 2);
    return lo + random.nextInt(hi - lo + 1);
  }
}
