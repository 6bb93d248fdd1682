package io.kvrouter.loadtest.soak;

import java.awt.BasicStroke;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The soak's figures from its samples ({@code load-tests/bench/soak.sh} writes them): a markdown
 * table of each quantity early after warm-up, at the end of the load and after the cool-down, and a
 * PNG chart of all of them over time (JFreeChart, headless).
 *
 * <p>Warm-up is the first {@link #WARM_UP} of the load phase (caches and the index fill, the JIT
 * compiles). "Early" is the mean of the next fifth of the load phase, "late" the mean of its last
 * fifth: a quantity is flat when late stays near early, however long the run.
 *
 * <p>Usage: {@code SoakReport samples.csv chart.png}; prints the table.
 */
public final class SoakReport {

  /** Share of the load phase taken as warm-up. */
  static final double WARM_UP = 0.2;

  /** One sample: seconds since the start, phase (load or cooldown), then the quantities. */
  record Sample(double seconds, boolean load, double[] values) {}

  /** The samples of one run, with the column names of its quantities. */
  record Samples(List<String> columns, List<Sample> rows) {

    static Samples parse(List<String> lines) {
      String[] head = lines.get(0).split(",");
      List<String> columns = List.of(head).subList(2, head.length);
      List<Sample> rows = new ArrayList<>();
      for (String line : lines.subList(1, lines.size())) {
        if (line.isBlank()) {
          continue;
        }
        String[] f = line.split(",", -1);
        double[] v = new double[columns.size()];
        for (int i = 0; i < v.length; i++) {
          v[i] =
              i + 2 < f.length && !f[i + 2].isBlank() ? Double.parseDouble(f[i + 2]) : Double.NaN;
        }
        rows.add(new Sample(Double.parseDouble(f[0]), "load".equals(f[1]), v));
      }
      return new Samples(columns, rows);
    }

    int column(String name) {
      return columns.indexOf(name);
    }

    double loadSeconds() {
      return rows.stream().filter(Sample::load).mapToDouble(Sample::seconds).max().orElse(0);
    }

    /** Mean of a quantity over the load-phase samples within {@code [from, to]} of the load. */
    double mean(int column, double from, double to) {
      double end = loadSeconds();
      return rows.stream()
          .filter(s -> s.load() && s.seconds() >= from * end && s.seconds() <= to * end)
          .mapToDouble(s -> s.values()[column])
          .filter(d -> !Double.isNaN(d))
          .average()
          .orElse(Double.NaN);
    }

    double maxAfterWarmUp(int column) {
      double end = loadSeconds();
      return rows.stream()
          .filter(s -> s.load() && s.seconds() >= WARM_UP * end)
          .mapToDouble(s -> s.values()[column])
          .filter(d -> !Double.isNaN(d))
          .max()
          .orElse(Double.NaN);
    }

    double last(int column) {
      return rows.isEmpty() ? Double.NaN : rows.get(rows.size() - 1).values()[column];
    }
  }

  private SoakReport() {}

  /** The table: per quantity early (after warm-up), late, the maximum after warm-up, the last. */
  static String table(Samples s) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "%d samples over %.0f s of load; warm-up: the first %.0f%%%n%n",
            s.rows().size(),
            s.loadSeconds(),
            WARM_UP * 100));
    out.append("| quantity | early (20-40%) | late (80-100%) | late / early | max after warm-up |")
        .append(" after cool-down |\n|---|---:|---:|---:|---:|---:|\n");
    for (int c = 0; c < s.columns().size(); c++) {
      double early = s.mean(c, WARM_UP, 0.4);
      double late = s.mean(c, 0.8, 1.0);
      out.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %s | %s | %s |%n",
              s.columns().get(c),
              fmt(early),
              fmt(late),
              early > 0 ? String.format(Locale.ROOT, "%.2f", late / early) : "–",
              fmt(s.maxAfterWarmUp(c)),
              fmt(s.last(c))));
    }
    return out.toString();
  }

  private static String fmt(double v) {
    if (Double.isNaN(v)) {
      return "–";
    }
    return Math.abs(v) >= 1e6
        ? String.format(Locale.ROOT, "%.1f M", v / 1e6)
        : String.format(Locale.ROOT, "%.0f", v);
  }

  /** Writes the chart: heap, index size, reservations and evictions on one time axis. */
  static void chart(Samples s, Path png) throws IOException {
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
    CombinedDomainXYPlot plot = new CombinedDomainXYPlot(new NumberAxis("seconds"));
    plot.add(panel(s, "MiB", 1.0 / (1 << 20), "heap_after_gc_bytes", "index_bytes"));
    plot.add(panel(s, "thousands", 1e-3, "index_blocks", "index_holdings", "evicted_holdings"));
    plot.add(
        panel(
            s,
            "count",
            1,
            "open_reservations",
            "detached_reservations",
            "in_flight",
            "predicted_runs"));
    JFreeChart chart = new JFreeChart("kvrouter soak: ingress state over time", plot);
    ChartUtils.saveChartAsPNG(png.toFile(), chart, 1000, 900);
  }

  private static XYPlot panel(Samples s, String unit, double scale, String... columns) {
    XYSeriesCollection data = new XYSeriesCollection();
    for (String name : columns) {
      int c = s.column(name);
      if (c < 0) {
        continue;
      }
      XYSeries series = new XYSeries(name, false, true);
      for (Sample row : s.rows()) {
        if (!Double.isNaN(row.values()[c])) {
          series.add(row.seconds(), row.values()[c] * scale);
        }
      }
      data.addSeries(series);
    }
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
    for (int i = 0; i < data.getSeriesCount(); i++) {
      renderer.setSeriesStroke(i, new BasicStroke(2f));
    }
    NumberAxis axis = new NumberAxis(unit);
    axis.setAutoRangeIncludesZero(true);
    return new XYPlot(data, null, axis, renderer);
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: SoakReport samples.csv chart.png");
      System.exit(2);
    }
    Samples s = Samples.parse(Files.readAllLines(Path.of(args[0])));
    chart(s, Path.of(args[1]));
    System.out.print(table(s));
    System.out.println();
    System.out.println("chart: " + args[1]);
  }
}
