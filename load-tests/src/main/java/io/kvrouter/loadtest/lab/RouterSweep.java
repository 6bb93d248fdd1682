package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogarithmicAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Many routers, one mind, as one report: the same workload replayed by every policy at each router
 * count K (with one propagation delay), with arrivals as recorded and, optionally, spread over
 * their tick ({@link Workload#spreadOverTicks}). Writes a table of p90 TTFT and hit rate per policy
 * and K, and two charts against K ({@code sweep_p90.png}, {@code sweep_hit.png}, one line per
 * policy and arrival mode).
 *
 * <p>Cost: one {@link PolicyLab#run} per K and arrival mode. Stateless.
 */
public final class RouterSweep {

  /**
   * One lab run of the sweep.
   *
   * @param arrivals {@code recorded} or {@code spread}
   * @param routers K
   * @param results the lab's results
   */
  public record Point(String arrivals, int routers, LabResults results) {}

  private RouterSweep() {}

  /**
   * Runs the lab at each of {@code routerCounts} with {@code config}'s delay; spread arrivals are
   * drawn from {@code spreadSeed} when {@code spread} is set.
   */
  public static List<Point> run(
      Workload workload,
      LabConfig config,
      List<Integer> routerCounts,
      boolean recorded,
      boolean spread,
      long spreadSeed,
      int threads,
      String command) {
    List<Point> points = new ArrayList<>();
    if (recorded) {
      for (int k : routerCounts) {
        LabConfig c = config.withRouters(k, config.propagationDelayMicros());
        points.add(new Point("recorded", k, PolicyLab.run(workload, c, threads, command)));
      }
    }
    if (spread) {
      Workload w = workload.spreadOverTicks(spreadSeed);
      for (int k : routerCounts) {
        LabConfig c = config.withRouters(k, config.propagationDelayMicros());
        points.add(new Point("spread", k, PolicyLab.run(w, c, threads, command)));
      }
    }
    return points;
  }

  /** The report: one table row per arrival mode and policy, p90 TTFT ms / hit rate per K. */
  public static String render(List<Point> points, String command) {
    StringBuilder sb = new StringBuilder();
    Point first = points.get(0);
    LabConfig c = first.results().config();
    sb.append("# Router sweep: ").append(first.results().workload()).append("\n\n");
    sb.append("```\n").append(command).append("\n```\n\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "%d requests, %d replicas, capacity %s blocks per replica, propagation delay %.1f ms,"
                + " seed %d. Cells: p90 TTFT ms / hit rate.%n%n",
            first.results().requests(),
            c.replicas(),
            c.capacityBlocks() == 0 ? "unlimited" : Long.toString(c.capacityBlocks()),
            c.propagationDelayMicros() / 1000.0,
            c.seed()));
    List<Integer> ks = points.stream().map(Point::routers).distinct().toList();
    sb.append("| arrivals | policy |");
    for (int k : ks) {
      sb.append(" K=").append(k).append(" |");
    }
    sb.append("\n|---|---|");
    sb.append("---:|".repeat(ks.size())).append('\n');
    for (String mode : List.of("recorded", "spread")) {
      for (String policy : c.policies()) {
        List<Point> row = points.stream().filter(p -> p.arrivals().equals(mode)).toList();
        if (row.isEmpty()) {
          continue;
        }
        sb.append("| ").append(mode).append(" | ").append(policy).append(" |");
        for (int k : ks) {
          PolicyResult r =
              row.stream()
                  .filter(p -> p.routers() == k)
                  .map(p -> p.results().policy(policy))
                  .findFirst()
                  .orElse(null);
          sb.append(
              r == null
                  ? " |"
                  : String.format(Locale.ROOT, " %.0f / %.3f |", r.ttft().p90(), r.hitRate()));
        }
        sb.append('\n');
      }
    }
    appendSessions(sb, points, ks);
    return sb.toString();
  }

  /**
   * With follow-up requests, a second table: per arrival mode, policy and K, follow-ups cached /
   * load CoV / one router's index MiB ({@link SessionMeasures}).
   */
  private static void appendSessions(StringBuilder sb, List<Point> points, List<Integer> ks) {
    if (points.stream()
        .allMatch(p -> p.results().policies().stream().allMatch(r -> r.sessions() == null))) {
      return;
    }
    sb.append("\nFollow-ups cached / same replica / load CoV / index MiB of one router:\n\n");
    sb.append("| arrivals | policy |");
    for (int k : ks) {
      sb.append(" K=").append(k).append(" |");
    }
    sb.append("\n|---|---|").append("---:|".repeat(ks.size())).append('\n');
    for (String mode : List.of("recorded", "spread")) {
      for (String policy : points.get(0).results().config().policies()) {
        List<Point> row = points.stream().filter(p -> p.arrivals().equals(mode)).toList();
        if (row.isEmpty()) {
          continue;
        }
        sb.append("| ").append(mode).append(" | ").append(policy).append(" |");
        for (int k : ks) {
          SessionMeasures m =
              row.stream()
                  .filter(p -> p.routers() == k)
                  .map(p -> p.results().policy(policy))
                  .filter(r -> r != null && r.sessions() != null)
                  .map(PolicyResult::sessions)
                  .findFirst()
                  .orElse(null);
          sb.append(
              m == null
                  ? " |"
                  : String.format(
                      Locale.ROOT,
                      " %.4f / %.3f / %.3f / %.0f |",
                      m.followUpCached(),
                      m.followUpSameReplica(),
                      m.loadCov(),
                      m.trackerBytes() / 1048576.0));
        }
        sb.append('\n');
      }
    }
  }

  /** Writes {@code sweep.md} and the two charts into {@code out}. */
  public static void write(List<Point> points, String command, Path out) throws IOException {
    System.setProperty("java.awt.headless", "true");
    Files.createDirectories(out);
    Files.writeString(
        out.resolve("sweep.md"),
        render(points, command) + "\n![p90 TTFT](sweep_p90.png)\n\n![hit rate](sweep_hit.png)\n",
        StandardCharsets.UTF_8);
    chart(points, "p90 TTFT (ms, log)", r -> r.ttft().p90(), true, out.resolve("sweep_p90.png"));
    chart(points, "hit rate", PolicyResult::hitRate, false, out.resolve("sweep_hit.png"));
  }

  private static void chart(
      List<Point> points,
      String label,
      ToDoubleFunction<PolicyResult> metric,
      boolean log,
      Path file)
      throws IOException {
    XYSeriesCollection data = new XYSeriesCollection();
    List<String> policies = points.get(0).results().config().policies();
    for (String mode : List.of("recorded", "spread")) {
      for (String policy : policies) {
        XYSeries s = new XYSeries(policy + " (" + mode + ")");
        for (Point p : points) {
          PolicyResult r = p.results().policy(policy);
          if (p.arrivals().equals(mode) && r != null) {
            s.add(p.routers(), Math.max(log ? 1.0 : 0.0, metric.applyAsDouble(r)));
          }
        }
        if (s.getItemCount() > 0) {
          data.addSeries(s);
        }
      }
    }
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            label + " against routers, " + points.get(0).results().workload(),
            "routers (K)",
            label,
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    if (log) {
      LogarithmicAxis axis = new LogarithmicAxis(label);
      axis.setAllowNegativesFlag(false);
      chart.getXYPlot().setRangeAxis(axis);
    }
    ChartUtils.saveChartAsPNG(file.toFile(), chart, 1000, 600);
  }
}
