package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongFunction;
import java.util.function.ToDoubleFunction;

/**
 * The same lab replayed under several seeds, each drawing its own arrivals (for example {@link
 * Workload#jitter}) and its own policy randomness, summarised per policy: mean, standard deviation
 * and range of p90 TTFT and hit rate, and in how many runs the policy had the lowest p90 of all and
 * a hit rate within {@value #HIT_TOLERANCE} of the highest. One replay is one draw: on a trace of
 * long prompts and full caches a millisecond's difference in two arrivals moves a policy's hit rate
 * by several thousandths, as much as the gap between two policies.
 *
 * <p>Cost: {@code repeats} × one {@link PolicyLab#run}. Stateless.
 */
public final class LabRepeats {

  /** A hit rate this close to the run's highest counts as level with it. */
  public static final double HIT_TOLERANCE = 0.005;

  /**
   * One run.
   *
   * @param seed the seed its arrivals and policies were drawn from
   * @param results the lab's results
   */
  public record Run(long seed, LabResults results) {}

  /**
   * Mean, sample standard deviation (0 for a single value) and range of one measure.
   *
   * @param mean mean
   * @param sd sample standard deviation
   * @param min smallest
   * @param max largest
   */
  public record Stats(double mean, double sd, double min, double max) {

    /** The statistics of {@code values}, at least one. */
    static Stats of(double[] values) {
      double sum = 0;
      double min = Double.POSITIVE_INFINITY;
      double max = Double.NEGATIVE_INFINITY;
      for (double v : values) {
        sum += v;
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      double mean = sum / values.length;
      double squares = 0;
      for (double v : values) {
        squares += (v - mean) * (v - mean);
      }
      double sd = values.length > 1 ? Math.sqrt(squares / (values.length - 1)) : 0;
      return new Stats(mean, sd, min, max);
    }
  }

  /**
   * One policy over every run.
   *
   * @param policy its name
   * @param p90 p90 TTFT in ms
   * @param hit hit rate
   * @param loadMaxOverMean uncached prefill per replica, max over mean
   * @param lowestP90 runs in which no other policy had a lower p90
   * @param hitLevel runs in which its hit rate was within {@link #HIT_TOLERANCE} of the highest
   */
  public record Row(
      String policy, Stats p90, Stats hit, Stats loadMaxOverMean, int lowestP90, int hitLevel) {}

  private LabRepeats() {}

  /**
   * Replays {@code workloadFor.apply(s)} under {@code config} with seed {@code s}, for {@code s}
   * from {@code config.seed()} to {@code config.seed() + repeats - 1}.
   *
   * @throws IllegalArgumentException if {@code repeats} is below 1
   */
  public static List<Run> run(
      LongFunction<Workload> workloadFor,
      LabConfig config,
      int repeats,
      int threads,
      String command) {
    if (repeats < 1) {
      throw new IllegalArgumentException("repeats must be >= 1, got " + repeats);
    }
    List<Run> runs = new ArrayList<>(repeats);
    for (int k = 0; k < repeats; k++) {
      long seed = config.seed() + k;
      runs.add(
          new Run(
              seed,
              PolicyLab.run(workloadFor.apply(seed), config.withSeed(seed), threads, command)));
    }
    return runs;
  }

  /** One row per policy, in the order the runs list them. */
  public static List<Row> summarise(List<Run> runs) {
    List<String> policies =
        runs.get(0).results().policies().stream().map(PolicyResult::policy).toList();
    List<Row> rows = new ArrayList<>(policies.size());
    for (String policy : policies) {
      int lowest = 0;
      int level = 0;
      for (Run run : runs) {
        PolicyResult mine = run.results().policy(policy);
        double bestP90 = best(run, r -> -r.ttft().p90());
        double bestHit = best(run, PolicyResult::hitRate);
        lowest += -mine.ttft().p90() >= bestP90 ? 1 : 0;
        level += mine.hitRate() >= bestHit - HIT_TOLERANCE ? 1 : 0;
      }
      rows.add(
          new Row(
              policy,
              stats(runs, policy, r -> r.ttft().p90()),
              stats(runs, policy, PolicyResult::hitRate),
              stats(runs, policy, PolicyResult::loadMaxOverMean),
              lowest,
              level));
    }
    return rows;
  }

  private static double best(Run run, ToDoubleFunction<PolicyResult> measure) {
    return run.results().policies().stream().mapToDouble(measure).max().orElseThrow();
  }

  private static Stats stats(List<Run> runs, String policy, ToDoubleFunction<PolicyResult> m) {
    return Stats.of(
        runs.stream().mapToDouble(run -> m.applyAsDouble(run.results().policy(policy))).toArray());
  }

  /** The report: what was run, then a row per policy and a row per run. */
  public static String render(List<Run> runs, String command) {
    LabResults first = runs.get(0).results();
    LabConfig c = first.config();
    StringBuilder sb = new StringBuilder();
    sb.append("# Repeated lab: ").append(first.workload()).append("\n\n");
    sb.append("```\n").append(command).append("\n```\n\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "%d requests, %d replicas, capacity %s blocks per replica, %d router(s), %d runs"
                + " (seeds %d-%d). \"lowest p90\": runs in which no other policy's p90 was lower;"
                + " \"hit level\": runs in which its hit rate was within %.3f of the highest.%n%n",
            first.requests(),
            c.replicas(),
            c.capacityBlocks() == 0 ? "unlimited" : Long.toString(c.capacityBlocks()),
            c.routers(),
            runs.size(),
            runs.get(0).seed(),
            runs.get(runs.size() - 1).seed(),
            HIT_TOLERANCE));
    sb.append(
        "| policy | p90 TTFT ms, mean ± sd | range | hit rate, mean ± sd | range |"
            + " load max/mean | lowest p90 | hit level |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : summarise(runs)) {
      sb.append(
          String.format(
              Locale.ROOT,
              "| %s | %.1f ± %.1f | %.1f-%.1f | %.4f ± %.4f | %.4f-%.4f | %.3f | %d/%d | %d/%d |%n",
              r.policy(),
              r.p90().mean(),
              r.p90().sd(),
              r.p90().min(),
              r.p90().max(),
              r.hit().mean(),
              r.hit().sd(),
              r.hit().min(),
              r.hit().max(),
              r.loadMaxOverMean().mean(),
              r.lowestP90(),
              runs.size(),
              r.hitLevel(),
              runs.size()));
    }
    sb.append("\nEach run, p90 TTFT ms / hit rate:\n\n| seed |");
    for (PolicyResult p : first.policies()) {
      sb.append(' ').append(p.policy()).append(" |");
    }
    sb.append("\n|---:|").append("---:|".repeat(first.policies().size())).append('\n');
    for (Run run : runs) {
      sb.append("| ").append(run.seed()).append(" |");
      for (PolicyResult p : run.results().policies()) {
        sb.append(String.format(Locale.ROOT, " %.1f / %.4f |", p.ttft().p90(), p.hitRate()));
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /** Writes {@code repeats.md} and each run's {@code seed-S/results.json} into {@code out}. */
  public static void write(List<Run> runs, String command, Path out) throws IOException {
    Files.createDirectories(out);
    Files.writeString(out.resolve("repeats.md"), render(runs, command), StandardCharsets.UTF_8);
    for (Run run : runs) {
      Path dir = out.resolve("seed-" + run.seed());
      Files.createDirectories(dir);
      ResultsJson.write(run.results(), dir.resolve("results.json"));
    }
  }
}
