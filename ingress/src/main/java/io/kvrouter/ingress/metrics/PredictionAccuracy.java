package io.kvrouter.ingress.metrics;

import io.kvrouter.protocol.TrackerReport;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Index accuracy per replica: over a sliding window of the last {@code window} answered requests
 * whose engine reported its cached tokens, the share where the tracker's prediction and the
 * engine's report disagree by more than {@code max(minToleranceTokens, 10% of the prompt)}. With
 * the defaults ({@link AccuracySettings}: 8 requests, at least 4) a replica whose predictions stop
 * matching is flagged at the 5th disagreeing request after any history of agreement, and from a
 * standing start at the 4th. (Predicted entries made by reservations do not hide a wrong index for
 * long: the tracker retires them shortly after the request's prefill unless the engine confirmed
 * them, see {@code TrackerConfig.predictedConfirmMillis}.)
 *
 * <p>Exported per replica as the gauges {@code kvrouter_prediction_mismatch_ratio{replica}} (the
 * share, 0..1) and {@code kvrouter_prediction_mismatch_alert{replica}} (1 while alerting). A
 * replica starts alerting, with one WARN log line, when the share exceeds {@link #ALERT_SHARE} over
 * at least {@code minSamples} requests; it stops, with one INFO line, when the share falls to
 * {@link #RECOVER_SHARE} or below (hysteresis, so a share hovering at the threshold does not flood
 * the log). A silent mismatch (wrong block size, tokenizer or hash seed) makes nearly every
 * repeated prompt disagree, so it trips within {@code minSamples} requests.
 *
 * <p>Thread-safe. Cost: O(1) per {@link #record} (one map lookup and a short lock on that replica's
 * window); memory {@code window} bytes per replica.
 */
public final class PredictionAccuracy {

  /** Share of disagreeing requests above which a replica alerts. */
  public static final double ALERT_SHARE = 0.5;

  /** Share at or below which an alerting replica recovers. */
  public static final double RECOVER_SHARE = 0.25;

  private static final Logger LOG = LoggerFactory.getLogger(PredictionAccuracy.class);

  private final MeterRegistry registry;
  private final int window;
  private final int minSamples;
  private final int minToleranceTokens;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  /**
   * @param registry where the gauges are registered (once per replica, on its first request)
   * @param window requests remembered per replica
   * @param minSamples requests needed before a replica may alert
   * @param minToleranceTokens smallest disagreement that counts (one block)
   */
  public PredictionAccuracy(
      MeterRegistry registry, int window, int minSamples, int minToleranceTokens) {
    if (window < 1 || minSamples < 1 || minSamples > window || minToleranceTokens < 0) {
      throw new IllegalArgumentException(
          "need 1 <= minSamples <= window and minToleranceTokens >= 0, got window="
              + window
              + " minSamples="
              + minSamples
              + " minToleranceTokens="
              + minToleranceTokens);
    }
    this.registry = registry;
    this.window = window;
    this.minSamples = minSamples;
    this.minToleranceTokens = minToleranceTokens;
  }

  /** With the window, minimum and tolerance of {@code settings}. */
  public static PredictionAccuracy of(MeterRegistry registry, AccuracySettings settings) {
    return new PredictionAccuracy(
        registry, settings.window(), settings.minSamples(), settings.toleranceTokens());
  }

  /** Every replica seen so far: requests in its window, disagreeing ones, whether it alerts. */
  public TrackerReport.Accuracy[] snapshot() {
    List<TrackerReport.Accuracy> out = new ArrayList<>(windows.size());
    windows.forEach((replica, w) -> out.add(w.figures(replica)));
    return out.toArray(TrackerReport.Accuracy[]::new);
  }

  /** True when a prediction and a report disagree by more than the tolerance. */
  boolean disagrees(int promptTokens, int predicted, int reported) {
    int tolerance = Math.max(minToleranceTokens, promptTokens / 10);
    return Math.abs((long) Math.max(0, predicted) - reported) > tolerance;
  }

  /**
   * Records one answered request. Requests without an engine report ({@code reported < 0}) are
   * ignored: they say nothing about the index.
   */
  public void record(String replica, int promptTokens, int predicted, int reported) {
    if (reported < 0 || replica == null) {
      return;
    }
    boolean miss = disagrees(promptTokens, predicted, reported);
    windows.computeIfAbsent(replica, this::newWindow).add(replica, miss);
  }

  /** The current disagreeing share of a replica (0 when unseen). */
  public double mismatchRatio(String replica) {
    Window w = windows.get(replica);
    return w == null ? 0 : w.ratio();
  }

  /** True while a replica is alerting. */
  public boolean alerting(String replica) {
    Window w = windows.get(replica);
    return w != null && w.alerting();
  }

  private Window newWindow(String replica) {
    Window w = new Window(window);
    Gauge.builder("kvrouter.prediction.mismatch.ratio", w, Window::ratio)
        .description(
            "Share of the last requests where predicted and engine-reported cached tokens disagree")
        .tag("replica", replica)
        .register(registry);
    Gauge.builder("kvrouter.prediction.mismatch.alert", w, x -> x.alerting() ? 1 : 0)
        .description("1 while the replica's prediction mismatch share is above the alert threshold")
        .tag("replica", replica)
        .register(registry);
    return w;
  }

  /** A ring of outcomes with a running count; guarded by its own monitor. */
  private final class Window {
    private final boolean[] misses;
    private int next;
    private int size;
    private int missCount;
    private boolean alerting;

    Window(int capacity) {
      misses = new boolean[capacity];
    }

    synchronized void add(String replica, boolean miss) {
      if (size == misses.length) {
        if (misses[next]) {
          missCount--;
        }
      } else {
        size++;
      }
      misses[next] = miss;
      if (miss) {
        missCount++;
      }
      next = (next + 1) % misses.length;
      double share = (double) missCount / size;
      if (!alerting && size >= minSamples && share > ALERT_SHARE) {
        alerting = true;
        LOG.warn(
            "Index accuracy: replica {} disagrees with the tracker on {} of the last {} requests "
                + "(predicted vs engine-reported cached tokens); check its block size, tokenizer and hash seed",
            replica,
            missCount,
            size);
      } else if (alerting && share <= RECOVER_SHARE) {
        alerting = false;
        LOG.info(
            "Index accuracy: replica {} recovered ({} of the last {} requests disagree)",
            replica,
            missCount,
            size);
      }
    }

    synchronized double ratio() {
      return size == 0 ? 0 : (double) missCount / size;
    }

    synchronized boolean alerting() {
      return alerting;
    }

    synchronized TrackerReport.Accuracy figures(String replica) {
      return new TrackerReport.Accuracy(replica, size, missCount, alerting);
    }
  }
}
