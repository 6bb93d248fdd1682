package io.kvrouter.loadtest.workload;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Builds workloads by name, for the lab's configuration and the command line.
 *
 * <table>
 *   <caption>Names and parameters (all optional)</caption>
 *   <tr><th>name</th><th>parameters (default)</th></tr>
 *   <tr><td>{@code mooncake-conversation}, {@code mooncake-synthetic}</td>
 *       <td>{@code path} (a file to read instead of the bundled trace), {@code speedUp} (1), {@code programs}
 *       ({@code none}; {@code infer}: from the lines' {@code session_id}s or the blocks, {@link
 *       MooncakeTraceReader#programs})</td></tr>
 *   <tr><td>{@code sglang-gsp}</td><td>{@code groups} (64), {@code promptsPerGroup} (16), {@code systemTokens}
 *       (2048), {@code questionTokens} (128), {@code outputTokens} (256), {@code qps} ({@code inf})</td></tr>
 *   <tr><td>{@code llmd-b2b}</td><td>{@code groups} (150), {@code promptsPerGroup} (5), {@code systemTokens}
 *       (6000), {@code questionTokens} (1200), {@code outputTokens} (1000), {@code stages} (the guide's,
 *       as {@code qps:seconds,qps:seconds,...}), {@code durationScale} (1)</td></tr>
 *   <tr><td>{@code multi-turn-chat}</td><td>{@code sessions} (64), {@code turns} (8), {@code systemTokens} (1024),
 *       {@code userTokens} (256), {@code answerTokens} (256), {@code sessionQps} (1), {@code thinkSeconds} (10)</td></tr>
 *   <tr><td>{@code agents}</td><td>{@code programs} (48), {@code kinds} (4), {@code medianTurns} (50),
 *       {@code medianToolSeconds} (2), {@code fanOut} (0.05), {@code programQps} (0.1), {@code blockTokens} (64):
 *       {@link AgentWorkload}</td></tr>
 *   <tr><td>{@code many-sessions}</td><td>{@code sessions} (20000), {@code sessionQps} (100), {@code t2Ratio} (0.26),
 *       {@code maxTurns} (8), {@code thinkSeconds} (10), {@code systemPrefixTokens} (1024), {@code systemPrefixPool} (64),
 *       {@code userTokens} (256), {@code answerTokens} (256)</td></tr>
 * </table>
 *
 * <p>Every workload is a pure function of (name, parameters, seed). Stateless.
 */
public final class Workloads {

  /** Name of the Mooncake conversation trace workload. */
  public static final String MOONCAKE_CONVERSATION = "mooncake-conversation";

  /** Name of the Mooncake synthetic trace workload. */
  public static final String MOONCAKE_SYNTHETIC = "mooncake-synthetic";

  /** All names {@link #byName} accepts. */
  public static final List<String> NAMES =
      List.of(
          MOONCAKE_CONVERSATION,
          MOONCAKE_SYNTHETIC,
          GeneratedSharedPrefixWorkload.NAME,
          LlmdB2bWorkload.NAME,
          MultiTurnChatWorkload.NAME,
          AgentWorkload.NAME,
          ManySessionsWorkload.NAME);

  private Workloads() {}

  /**
   * The named workload.
   *
   * @throws IllegalArgumentException on an unknown name, an unknown parameter or a bad value
   * @throws TraceFormatException if a trace file is malformed
   */
  public static Workload byName(String name, Map<String, String> params, long seed) {
    switch (name) {
      case MOONCAKE_CONVERSATION:
      case MOONCAKE_SYNTHETIC:
        {
          WorkloadParams p =
              new WorkloadParams(name, params, Set.of("path", "speedUp", "programs"));
          String path = p.string("path", null);
          Workload w =
              path != null
                  ? MooncakeTraceReader.read(Paths.get(path), name, seed)
                  : bundled(name, seed);
          double speedUp = p.positiveDouble("speedUp", 1.0);
          w = speedUp == 1.0 ? w : w.speedUp(speedUp);
          return programs(w, p.string("programs", "none"));
        }
      case GeneratedSharedPrefixWorkload.NAME:
        {
          WorkloadParams p = gridParams(name, params, "qps");
          GeneratedSharedPrefixWorkload.Config d = GeneratedSharedPrefixWorkload.Config.DEFAULTS;
          return GeneratedSharedPrefixWorkload.generate(
              grid(
                  p,
                  d,
                  (g, n, s, q, o) ->
                      new GeneratedSharedPrefixWorkload.Config(
                          g, n, s, q, o, p.positiveDouble("qps", d.qps()))),
              seed);
        }
      case LlmdB2bWorkload.NAME:
        {
          WorkloadParams p = gridParams(name, params, "stages", "durationScale");
          LlmdB2bWorkload.Config d = LlmdB2bWorkload.Config.DEFAULTS;
          String stagesText = p.string("stages", null);
          List<RateStage> stages = stagesText == null ? d.stages() : parseStages(stagesText);
          LlmdB2bWorkload.Config c =
              grid(p, d, (g, n, s, q, o) -> new LlmdB2bWorkload.Config(g, n, s, q, o, stages));
          double scale = p.positiveDouble("durationScale", 1.0);
          return LlmdB2bWorkload.generate(scale == 1.0 ? c : c.scaleDurations(scale), seed);
        }
      case MultiTurnChatWorkload.NAME:
        {
          WorkloadParams p =
              new WorkloadParams(
                  name,
                  params,
                  Set.of(
                      "sessions",
                      "turns",
                      "systemTokens",
                      "userTokens",
                      "answerTokens",
                      "sessionQps",
                      "thinkSeconds"));
          MultiTurnChatWorkload.Config d = MultiTurnChatWorkload.Config.DEFAULTS;
          return MultiTurnChatWorkload.generate(
              new MultiTurnChatWorkload.Config(
                  p.positiveInt("sessions", d.sessions()),
                  p.positiveInt("turns", d.turns()),
                  p.positiveInt("systemTokens", d.systemTokens()),
                  p.positiveInt("userTokens", d.userTokens()),
                  p.positiveInt("answerTokens", d.answerTokens()),
                  p.positiveDouble("sessionQps", d.sessionQps()),
                  p.positiveDouble("thinkSeconds", d.thinkSeconds())),
              seed);
        }
      case AgentWorkload.NAME:
        return AgentWorkload.generate(
            AgentWorkload.config(new WorkloadParams(name, params, AgentWorkload.PARAMS)), seed);
      case ManySessionsWorkload.NAME:
        return manySessions(params, seed);
      default:
        throw new IllegalArgumentException("unknown workload '" + name + "'; known: " + NAMES);
    }
  }

  /** {@link ManySessionsWorkload} with its parameters read from {@code params}. */
  private static Workload manySessions(Map<String, String> params, long seed) {
    WorkloadParams p =
        new WorkloadParams(
            ManySessionsWorkload.NAME,
            params,
            Set.of(
                "sessions",
                "sessionQps",
                "t2Ratio",
                "maxTurns",
                "thinkSeconds",
                "systemPrefixTokens",
                "systemPrefixPool",
                "userTokens",
                "answerTokens"));
    ManySessionsWorkload.Config d = ManySessionsWorkload.Config.DEFAULTS;
    return ManySessionsWorkload.generate(
        new ManySessionsWorkload.Config(
            p.positiveInt("sessions", d.sessions()),
            p.positiveDouble("sessionQps", d.sessionQps()),
            p.fraction("t2Ratio", d.t2Ratio()),
            p.positiveInt("maxTurns", d.maxTurns()),
            p.positiveDouble("thinkSeconds", d.thinkSeconds()),
            p.positiveInt("systemPrefixTokens", d.systemPrefixTokens()),
            p.positiveInt("systemPrefixPool", d.systemPrefixPool()),
            p.positiveInt("userTokens", d.userTokens()),
            p.positiveInt("answerTokens", d.answerTokens())),
        seed);
  }

  /**
   * {@code trace} with its programs ({@link MooncakeTraceReader#programs}) for {@code infer},
   * without for {@code none}.
   */
  private static Workload programs(Workload trace, String mode) {
    return switch (mode) {
      case "none" -> trace;
      case "infer" -> trace.withPrograms(MooncakeTraceReader.programs(trace));
      default ->
          throw new IllegalArgumentException(
              "parameter 'programs' of a trace workload is none or infer, got '" + mode + "'");
    };
  }

  /**
   * The parameters of the shared-prefix grid ({@code sglang-gsp} and {@code llmd-b2b} take them).
   */
  private static final List<String> GRID_PARAMS =
      List.of("groups", "promptsPerGroup", "systemTokens", "questionTokens", "outputTokens");

  /** The parameters of a grid workload: the grid's and its {@code own}. */
  private static WorkloadParams gridParams(String name, Map<String, String> params, String... own) {
    Set<String> known = new HashSet<>(GRID_PARAMS);
    known.addAll(List.of(own));
    return new WorkloadParams(name, params, known);
  }

  /** A grid workload's config from its five counts. */
  private interface GridConfig<C> {
    C of(int groups, int promptsPerGroup, int systemTokens, int questionTokens, int outputTokens);
  }

  /**
   * The config with the grid's counts read from {@code p} (in that order), each {@code d}'s by
   * default.
   */
  private static <C> C grid(WorkloadParams p, SharedPrefixPrompts.Shape d, GridConfig<C> config) {
    return config.of(
        p.positiveInt("groups", d.groups()),
        p.positiveInt("promptsPerGroup", d.promptsPerGroup()),
        p.positiveInt("systemTokens", d.systemTokens()),
        p.positiveInt("questionTokens", d.questionTokens()),
        p.positiveInt("outputTokens", d.outputTokens()));
  }

  /** A Mooncake-format trace file, named after the file, token expansion seeded with 0. */
  public static Workload fromTrace(Path file) {
    return fromTrace(file, 0L);
  }

  /** A Mooncake-format trace file, named after the file without {@code .jsonl}. */
  public static Workload fromTrace(Path file, long seed) {
    String fileName = file.getFileName().toString();
    String name =
        fileName.endsWith(".jsonl") ? fileName.substring(0, fileName.length() - 6) : fileName;
    return MooncakeTraceReader.read(file, name, seed);
  }

  /**
   * A trace bundled in the jar ({@link BundledTraces}), named as the workload.
   *
   * @throws IllegalArgumentException if no trace of that name is bundled
   */
  public static Workload bundled(String name, long seed) {
    try (java.io.BufferedReader in = BundledTraces.open(name)) {
      return MooncakeTraceReader.read(in, BundledTraces.resource(name), name, seed);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot read the bundled trace " + name, e);
    }
  }

  private static List<RateStage> parseStages(String text) {
    List<RateStage> stages = new ArrayList<>();
    for (String part : text.split(",")) {
      if (!part.isBlank()) {
        stages.add(RateStage.parse(part));
      }
    }
    return stages;
  }
}
