package io.kvrouter.loadtest.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * A PNG scatter of each OK request's TTFT (from its intended start) against its intended send time,
 * one series per target: herding shows as TTFT spikes right after a burst, an overloaded ingress or
 * engine as one series drifting up. Drawn headless with JFreeChart.
 *
 * <p>Stateless; one point per request with a first chunk (a 100k-request run makes a ~1 MB chart in
 * about a second).
 */
public final class TtftChart {

  /** File name of the chart. */
  public static final String FILE = "ttft_over_time.png";

  private static final int WIDTH = 1000;
  private static final int HEIGHT = 600;

  private TtftChart() {}

  /** Writes {@link #FILE} into {@code dir} (which must exist). */
  public static void write(BenchRun run, List<String> targets, String title, Path dir)
      throws IOException {
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
    XYSeriesCollection data = new XYSeriesCollection();
    XYSeries[] series = new XYSeries[targets.size()];
    for (int t = 0; t < series.length; t++) {
      series[t] = new XYSeries(targets.get(t), false, true);
      data.addSeries(series[t]);
    }
    for (RequestOutcome o : run.outcomes()) {
      if (o.status() == RequestOutcome.Status.OK
          && o.hasFirstChunk()
          && o.target() >= 0
          && o.target() < series.length) {
        series[o.target()].add(o.intendedNanos() / 1e9, o.ttftCorrectedNanos() / 1e6, false);
      }
    }
    JFreeChart chart =
        ChartFactory.createScatterPlot(
            title,
            "intended send time (s)",
            "TTFT from intended start (ms)",
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    ChartUtils.saveChartAsPNG(dir.resolve(FILE).toFile(), chart, WIDTH, HEIGHT);
  }
}
