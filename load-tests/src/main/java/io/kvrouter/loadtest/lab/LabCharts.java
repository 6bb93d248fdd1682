package io.kvrouter.loadtest.lab;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogarithmicAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The lab's PNG charts, drawn headless with JFreeChart: the TTFT CDF of every policy on one chart
 * (log time axis), and per policy the uncached prefill tokens per second of each replica over
 * virtual time. Stateless; O(requests × policies) points at most (CDFs are thinned to about 500
 * points per policy).
 */
public final class LabCharts {

  private static final int WIDTH = 1000;
  private static final int HEIGHT = 600;

  private LabCharts() {}

  /** Writes the charts into {@code out}; returns their file names. */
  public static List<String> write(LabResults r, Path out) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<String> files = new ArrayList<>();
    files.add(ttftCdf(r, out));
    for (PolicyResult p : r.policies()) {
      files.add(load(r, p, out));
    }
    return files;
  }

  private static String ttftCdf(LabResults r, Path out) throws IOException {
    XYSeriesCollection data = new XYSeriesCollection();
    for (PolicyResult p : r.policies()) {
      XYSeries s = new XYSeries(p.policy());
      double[] t = p.ttftSortedMillis();
      int step = Math.max(1, t.length / 500);
      for (int i = 0; i < t.length; i += step) {
        s.add(Math.max(1.0, t[i]), (i + 1) / (double) t.length);
      }
      if (t.length > 0) {
        s.add(Math.max(1.0, t[t.length - 1]), 1.0);
      }
      data.addSeries(s);
    }
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            "TTFT CDF, " + r.workload() + ", " + r.config().replicas() + " replicas",
            "TTFT (ms, log)",
            "fraction of requests",
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    XYPlot plot = chart.getXYPlot();
    LogarithmicAxis axis = new LogarithmicAxis("TTFT (ms, log)");
    axis.setAllowNegativesFlag(false);
    plot.setDomainAxis(axis);
    String name = "ttft_cdf.png";
    ChartUtils.saveChartAsPNG(out.resolve(name).toFile(), chart, WIDTH, HEIGHT);
    return name;
  }

  private static String load(LabResults r, PolicyResult p, Path out) throws IOException {
    XYSeriesCollection data = new XYSeriesCollection();
    int replicas = r.config().replicas();
    for (int i = 0; i < replicas; i++) {
      XYSeries s = new XYSeries("r" + i);
      for (int k = 0; k < p.loadSeries().size(); k++) {
        s.add(p.loadSeriesSeconds()[k], p.loadSeries().get(k)[i]);
      }
      data.addSeries(s);
    }
    JFreeChart chart =
        ChartFactory.createXYLineChart(
            "Uncached prefill tokens/s per replica, policy " + p.policy(),
            "virtual time (s)",
            "prefill tokens/s",
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    String name = "load_" + p.policy().replace('/', '-') + ".png";
    ChartUtils.saveChartAsPNG(out.resolve(name).toFile(), chart, WIDTH, HEIGHT);
    return name;
  }
}
