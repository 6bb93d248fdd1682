package io.kvrouter.loadtest.workload;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Coding-agent programs: sessions of tens to hundreds of turns, each turn the whole history so far,
 * separated by tool runs, some fanning out to sub-agents, some compacting their history. The shape
 * of each part and where it is taken from:
 *
 * <ul>
 *   <li><b>Agent kinds and their prefix.</b> {@code kinds} agent kinds (default 4), each with a
 *       system prompt and tool definitions every session of that kind sends first, of a length
 *       uniform in [10,000, 25,000] tokens: issue 55's "10-25k tokens of system prompt and tool
 *       definitions shared by every session". A session opens with that prefix and a task of
 *       200-2,000 tokens (uniform; an assumption).
 *   <li><b>Turns per session.</b> Log-normal with median {@code medianTurns} (50) and σ 0.7,
 *       clipped to [10, 200]: the "sessions of 10-200 turns"; the median sits inside the
 *       29-78 median steps per trajectory of four models' 2,920 SWE-agent trajectories on SWE-Bench
 *       Pro (nilenso, "SWE-Bench Pro trajectory analysis", reference tables, section 1). σ is an
 *       assumption.
 *   <li><b>Tool results.</b> Each turn that ends in a tool call is followed by a tool result
 *       log-uniform in [500, 10,000] tokens appended to the history: the "tool results of
 *       0.5-10k tokens a turn".
 *   <li><b>Output per turn.</b> A turn that calls a tool writes log-normal tokens with median 200
 *       and σ 0.8, clipped to [20, 2,000]; a session's last turn writes 300-1,500 (uniform). These
 *       are assumptions (an agent step is a short thought and one action).
 *   <li><b>Tool runs.</b> The gap from a reply to the next turn is log-normal with median {@code
 *       medianToolSeconds} (2 s) and σ 1.5, clipped to [0.1 s, 60 s]: heavy-tailed over the issue's
 *       "a fraction of a second to a minute"; tool-call durations vary widely within one agent (Li
 *       et al., "Continuum: Efficient and Robust Multi-Turn LLM Agent Scheduling with KV Cache
 *       Time-to-Live", arXiv 2511.02230, on SWE-Bench and BFCL traces). Median and σ are
 *       assumptions.
 *   <li><b>Compaction.</b> When the history passes the session's threshold, uniform in [100,000,
 *       200,000] tokens (the "to 100-200k tokens"; Claude Code compacts near the top of its
 *       200,000-token window, code.claude.com/docs context-window, "you run /compact, which
 *       replaces the conversation with a structured summary"), the next request asks for a summary:
 *       the whole history plus a 300-token instruction, answered by a summary of 2,000-6,000 tokens
 *       (uniform; an assumption below Claude Code's 20,000-token cap on a summary, {@code
 *       MAX_OUTPUT_TOKENS_FOR_SUMMARY} in its {@code autoCompact.ts} as read by third parties). The
 *       turn after it is the agent's prefix, the summary and a 100-token continuation: the history
 *       is gone from the prompt.
 *   <li><b>Sub-agents.</b> A turn (neither the first nor the last) fans out with probability {@code
 *       fanOut} (0.05): 2-4 sub-agents (uniform) whose first requests are the parent's prompt, its
 *       reply and a 200-1,000-token sub-task, sent within one millisecond of each other (a quarter
 *       millisecond apart), the "N requests sharing a prefix within a millisecond". Each
 *       runs 3-8 turns (uniform) as above, without compaction or fan-out of its own; the parent's
 *       next turn waits for all of them and carries each one's last reply (a sub-agent returns only
 *       its summary: code.claude.com/docs context-window, "Only the summary and a small metadata
 *       trailer come back"). Probability, count and turns are assumptions.
 *   <li><b>Session starts.</b> Poisson at {@code programQps} (0.1 a second, an assumption).
 * </ul>
 *
 * <p>The prompt is held as chained block ids of {@code blockTokens} (64) tokens, the Mooncake
 * layout ({@link MooncakeTraceReader}) at a finer block: block {@code b}'s id hashes the previous
 * id and the identity of the content in it (which piece of which history, at which offset), so two
 * prompts share leading ids exactly as far as they share content in whole blocks. Token ids are
 * synthetic ({@link TokenExpander}), not rendered through a chat template: the lab routes on tokens
 * and the rendering changes only where the blocks break.
 *
 * <p>Arrivals: a session's first request at its start; every later one waits for the reply it
 * follows (closed loop, {@link Programs}); the arrival recorded for it is the open-loop estimate
 * (the predecessor's, plus 15 ms per output token, plus the gap), which orders the requests and is
 * what a replay without programs sends.
 *
 * <p>Deterministic for a seed. Cost: O(requests × blocks per prompt) for the ids (a prompt of
 * 150,000 tokens is 2,344 ids, 19 KB).
 */
public final class AgentWorkload {

  /** Workload name in {@link Workloads#byName}. */
  public static final String NAME = "agents";

  private static final long NAMESPACE = 0x4147454E54L; // "AGENT"

  /** Open-loop estimate of the time to generate one output token, µs (15 ms). */
  private static final long DECODE_MICROS_PER_TOKEN = 15_000;

  /**
   * @param programs sessions (top-level programs)
   * @param kinds agent kinds, each with its own shared prefix
   * @param medianTurns median turns of a session
   * @param medianToolSeconds median tool run between a reply and the next turn
   * @param fanOut probability that a turn fans out to sub-agents
   * @param programQps session start rate
   * @param blockTokens tokens per chained block id
   */
  public record Config(
      int programs,
      int kinds,
      int medianTurns,
      double medianToolSeconds,
      double fanOut,
      double programQps,
      int blockTokens) {

    /** 48 sessions of 4 kinds, median 50 turns and 2 s tool runs, 5 % fan-out, 0.1 session/s. */
    public static final Config DEFAULTS = new Config(48, 4, 50, 2.0, 0.05, 0.1, 64);

    public Config {
      if (programs <= 0
          || kinds <= 0
          || medianTurns <= 0
          || !(medianToolSeconds > 0)
          || !(fanOut >= 0 && fanOut <= 1)
          || !(programQps > 0)
          || Double.isInfinite(programQps)
          || blockTokens <= 0) {
        throw new IllegalArgumentException("invalid " + NAME + " config: " + this);
      }
    }
  }

  /** Fewest and most turns of a session (the 10-200). */
  static final int MIN_TURNS = 10;

  static final int MAX_TURNS = 200;

  /** Shortest and longest shared prefix of an agent kind, tokens. */
  static final int MIN_PREFIX = 10_000;

  static final int MAX_PREFIX = 25_000;

  /** Shortest and longest tool result, tokens. */
  static final int MIN_TOOL_RESULT = 500;

  static final int MAX_TOOL_RESULT = 10_000;

  /** Lowest and highest compaction threshold, tokens of history. */
  static final int MIN_COMPACT_AT = 100_000;

  static final int MAX_COMPACT_AT = 200_000;

  /** Shortest and longest tool run, µs. */
  static final long MIN_GAP_MICROS = 100_000;

  static final long MAX_GAP_MICROS = 60_000_000;

  /** The parameters {@link Workloads#byName} takes, named as {@link Config}'s components. */
  static final java.util.Set<String> PARAMS =
      java.util.Set.of(
          "programs",
          "kinds",
          "medianTurns",
          "medianToolSeconds",
          "fanOut",
          "programQps",
          "blockTokens");

  private AgentWorkload() {}

  /** The config of {@code p}, each parameter {@link Config#DEFAULTS}'s by default. */
  static Config config(WorkloadParams p) {
    Config d = Config.DEFAULTS;
    return new Config(
        p.positiveInt("programs", d.programs()),
        p.positiveInt("kinds", d.kinds()),
        p.positiveInt("medianTurns", d.medianTurns()),
        p.positiveDouble("medianToolSeconds", d.medianToolSeconds()),
        p.fraction("fanOut", d.fanOut()),
        p.positiveDouble("programQps", d.programQps()),
        p.positiveInt("blockTokens", d.blockTokens()));
  }

  /** Generates the workload. */
  public static Workload generate(Config config, long seed) {
    return new Builder(config, seed).build();
  }

  /** A piece of a history: {@code length} tokens of content {@code key}. */
  record Piece(long key, int length) {}

  /**
   * A sub-agent as its parent sees it: its last request, the open-loop estimate of that reply's
   * end, and the reply's length (what comes back to the parent).
   */
  private record SubAgent(String lastKey, long endMicros, int result) {}

  /** One generation run's state. */
  private static final class Builder {
    private final Config config;
    private final long seed;
    private final SplittableRandom random;
    private final TokenExpander expander;
    private final List<WorkloadRequest> requests = new ArrayList<>();
    private final Map<String, Programs.Step> steps = new HashMap<>();
    private final int[] prefixLength;

    Builder(Config config, long seed) {
      this.config = config;
      this.seed = seed;
      this.random = new SplittableRandom(seed ^ NAMESPACE);
      this.expander = new TokenExpander(seed);
      this.prefixLength = new int[config.kinds()];
      for (int k = 0; k < config.kinds(); k++) {
        prefixLength[k] = uniform(MIN_PREFIX, MAX_PREFIX);
      }
    }

    Workload build() {
      long[] starts =
          PoissonArrivals.constantRate(config.programs(), config.programQps(), random.split());
      for (int p = 0; p < config.programs(); p++) {
        session(p, starts[p]);
      }
      return Workload.of(NAME, seed, config.blockTokens(), requests)
          .withPrograms(new Programs(steps));
    }

    /** One top-level session, program {@code p}, starting at {@code startMicros}. */
    private void session(int p, long startMicros) {
      String program = "agent-" + p;
      int kind = random.nextInt(config.kinds());
      int turns = turns();
      int compactAt = uniform(MIN_COMPACT_AT, MAX_COMPACT_AT);
      List<Piece> history = new ArrayList<>();
      history.add(new Piece(TokenExpander.key(NAMESPACE, 1, kind), prefixLength[kind]));
      history.add(new Piece(TokenExpander.key(NAMESPACE, 2, p), uniform(200, 2_000)));
      List<String> after = List.of();
      long gap = 0;
      long at = startMicros;
      int generation = 0;
      int turn = 0;
      for (int t = 0; t < turns; t++) {
        boolean last = t == turns - 1;
        int output = last ? uniform(300, 1_500) : stepOutput();
        String key = add(program, program, turn, history, output, !last, after, gap, at);
        at += output * DECODE_MICROS_PER_TOKEN;
        turn++;
        if (last) {
          break;
        }
        history.add(new Piece(TokenExpander.key(NAMESPACE, 3, p, t), output));
        after = List.of(key);
        gap = toolGap();
        if (t > 0 && random.nextDouble() < config.fanOut()) {
          List<String> ends = new ArrayList<>();
          long joined = at;
          int n = uniform(2, 4);
          List<Piece> forked = List.copyOf(history);
          for (int j = 0; j < n; j++) {
            SubAgent sub = subAgent(program, p, t, j, forked, key, at);
            ends.add(sub.lastKey());
            joined = Math.max(joined, sub.endMicros());
            history.add(new Piece(TokenExpander.key(NAMESPACE, 4, p, t, j), sub.result()));
          }
          after = ends;
          gap = 0;
          at = joined;
        } else {
          history.add(
              new Piece(
                  TokenExpander.key(NAMESPACE, 5, p, t),
                  logUniform(MIN_TOOL_RESULT, MAX_TOOL_RESULT)));
          at += gap;
        }
        if (length(history) > compactAt) {
          int summary = uniform(2_000, 6_000);
          history.add(new Piece(TokenExpander.key(NAMESPACE, 6, p, generation), 300));
          String compactKey = add(program, program, turn, history, summary, false, after, gap, at);
          at += summary * DECODE_MICROS_PER_TOKEN;
          turn++;
          long prefixKey = history.get(0).key();
          history.clear();
          history.add(new Piece(prefixKey, prefixLength[kind]));
          history.add(new Piece(TokenExpander.key(NAMESPACE, 7, p, generation), summary));
          history.add(new Piece(TokenExpander.key(NAMESPACE, 8, p, generation), 100));
          generation++;
          after = List.of(compactKey);
          gap = 0;
        }
      }
    }

    /**
     * Sub-agent {@code j} of program {@code p}'s turn {@code t}: its first prompt is the parent's
     * history (which holds the parent's reply) and a sub-task.
     */
    private SubAgent subAgent(
        String program, int p, int t, int j, List<Piece> parent, String parentKey, long at) {
      String session = program + "/sub-" + t + "-" + j;
      List<Piece> history = new ArrayList<>(parent);
      history.add(new Piece(TokenExpander.key(NAMESPACE, 9, p, t, j), uniform(200, 1_000)));
      int turns = uniform(3, 8);
      List<String> after = List.of(parentKey);
      long gap = j * 250L;
      long time = at + gap;
      for (int s = 0; s < turns; s++) {
        boolean last = s == turns - 1;
        int output = last ? uniform(300, 1_500) : stepOutput();
        String key = add(session, program, s, history, output, !last, after, gap, time);
        time += output * DECODE_MICROS_PER_TOKEN;
        if (last) {
          return new SubAgent(key, time, output);
        }
        history.add(new Piece(TokenExpander.key(NAMESPACE, 10, p, t, j, s), output));
        history.add(
            new Piece(
                TokenExpander.key(NAMESPACE, 11, p, t, j, s),
                logUniform(MIN_TOOL_RESULT, MAX_TOOL_RESULT)));
        after = List.of(key);
        gap = toolGap();
        time += gap;
      }
      throw new IllegalStateException("a sub-agent ends on its last turn");
    }

    /** Adds one request whose prompt is {@code history}; returns its key. */
    private String add(
        String session,
        String program,
        int turn,
        List<Piece> history,
        int output,
        boolean toolCall,
        List<String> after,
        long gap,
        long at) {
      int length = length(history);
      long[] ids = blockIds(history, length, config.blockTokens());
      PromptTokens prompt = PromptTokens.ofBlocks(expander, ids, length, config.blockTokens());
      requests.add(new WorkloadRequest(0, at, session, turn, prompt, output, ids));
      String key = Programs.key(session, turn);
      steps.put(key, new Programs.Step(program, after, gap, toolCall));
      return key;
    }

    private int turns() {
      double x = Math.exp(Math.log(config.medianTurns()) + 0.7 * gaussian());
      return (int) Math.max(MIN_TURNS, Math.min(MAX_TURNS, Math.round(x)));
    }

    private int stepOutput() {
      double x = Math.exp(Math.log(200) + 0.8 * gaussian());
      return (int) Math.max(20, Math.min(2_000, Math.round(x)));
    }

    private long toolGap() {
      double x = Math.exp(Math.log(config.medianToolSeconds() * 1e6) + 1.5 * gaussian());
      return (long) Math.max(MIN_GAP_MICROS, Math.min(MAX_GAP_MICROS, x));
    }

    /** A standard normal variate (Box-Muller, one of the pair). */
    private double gaussian() {
      double u = 1.0 - random.nextDouble();
      double v = random.nextDouble();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }

    private int uniform(int lo, int hi) {
      return lo + random.nextInt(hi - lo + 1);
    }

    private int logUniform(int lo, int hi) {
      return (int)
          Math.round(Math.exp(Math.log(lo) + random.nextDouble() * Math.log((double) hi / lo)));
    }
  }

  private static int length(List<Piece> history) {
    long sum = 0;
    for (Piece p : history) {
      sum += p.length();
    }
    return (int) sum;
  }

  /**
   * Chained ids of the blocks of {@code history}: block {@code b}'s id mixes the previous id, the
   * block's length and, per piece it overlaps, the piece's key and the offset and count of its
   * tokens there. O(blocks + pieces).
   */
  static long[] blockIds(List<Piece> history, int length, int blockTokens) {
    int blocks = (length + blockTokens - 1) / blockTokens;
    long[] ids = new long[blocks];
    long parent = NAMESPACE;
    int piece = 0;
    int offset = 0; // tokens of history.get(piece) consumed
    for (int b = 0; b < blocks; b++) {
      int size = Math.min(blockTokens, length - b * blockTokens);
      long h = TokenExpander.mix64(parent ^ size);
      int need = size;
      while (need > 0) {
        Piece p = history.get(piece);
        int take = Math.min(need, p.length() - offset);
        h = TokenExpander.mix64(h ^ TokenExpander.key(p.key(), offset, take));
        offset += take;
        need -= take;
        if (offset == p.length()) {
          piece++;
          offset = 0;
        }
      }
      ids[b] = h;
      parent = h;
    }
    return ids;
  }
}
