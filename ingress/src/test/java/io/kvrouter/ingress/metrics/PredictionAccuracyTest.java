package io.kvrouter.ingress.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class PredictionAccuracyTest {

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final PredictionAccuracy accuracy = new PredictionAccuracy(registry, 10, 4, 16);
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private Logger logger;
  private Level previousLevel;

  @BeforeEach
  void captureLog() {
    logger = (Logger) LoggerFactory.getLogger(PredictionAccuracy.class);
    previousLevel = logger.getLevel();
    logger.setLevel(Level.INFO);
    log.start();
    logger.addAppender(log);
  }

  @AfterEach
  void releaseLog() {
    logger.detachAppender(log);
    logger.setLevel(previousLevel);
  }

  private List<ILoggingEvent> lines(Level level) {
    return log.list.stream().filter(e -> e.getLevel() == level).toList();
  }

  @Test
  void tolerance_isOneBlockOrTenPercentOfThePrompt() {
    assertThat(accuracy.disagrees(100, 0, 16)).isFalse();
    assertThat(accuracy.disagrees(100, 0, 17)).isTrue();
    assertThat(accuracy.disagrees(1000, 900, 1000)).isFalse();
    assertThat(accuracy.disagrees(1000, 800, 1000)).isTrue();
    assertThat(accuracy.disagrees(1000, -1, 0)).as("no prediction counts as zero").isFalse();
  }

  @Test
  void unknownEngineReports_areIgnored() {
    for (int i = 0; i < 10; i++) {
      accuracy.record("r", 1000, 0, -1);
    }
    assertThat(accuracy.mismatchRatio("r")).isZero();
    assertThat(registry.scrape()).doesNotContain("replica=\"r\"");
  }

  @Test
  void mostRequestsDisagreeing_alertsOnce_withWarn_andExportsRatioAndFlag() {
    accuracy.record("good", 1000, 512, 512);
    for (int i = 0; i < 3; i++) {
      accuracy.record("bad", 1000, 0, 992);
    }
    assertThat(accuracy.alerting("bad")).as("fewer than minSamples").isFalse();
    accuracy.record("bad", 1000, 0, 992);
    assertThat(accuracy.alerting("bad")).isTrue();
    for (int i = 0; i < 5; i++) {
      accuracy.record("bad", 1000, 0, 992);
    }
    assertThat(lines(Level.WARN)).hasSize(1);
    assertThat(lines(Level.WARN).get(0).getFormattedMessage())
        .contains("replica bad")
        .contains("block size");
    assertThat(accuracy.alerting("good")).isFalse();

    String scrape = registry.scrape();
    assertThat(scrape).contains("kvrouter_prediction_mismatch_ratio{replica=\"bad\"} 1.0");
    assertThat(scrape).contains("kvrouter_prediction_mismatch_alert{replica=\"bad\"} 1.0");
    assertThat(scrape).contains("kvrouter_prediction_mismatch_ratio{replica=\"good\"} 0.0");
    assertThat(scrape).contains("kvrouter_prediction_mismatch_alert{replica=\"good\"} 0.0");
  }

  @Test
  void alertingReplica_recoversWithInfo_whenTheWindowFillsWithAgreement() {
    for (int i = 0; i < 10; i++) {
      accuracy.record("r", 1000, 0, 992);
    }
    assertThat(accuracy.alerting("r")).isTrue();
    for (int i = 0; i < 7; i++) {
      accuracy.record("r", 1000, 992, 992);
    }
    assertThat(accuracy.mismatchRatio("r")).isEqualTo(0.3);
    assertThat(accuracy.alerting("r"))
        .as("hysteresis: 0.3 is still above the recovery share")
        .isTrue();
    accuracy.record("r", 1000, 992, 992);
    assertThat(accuracy.alerting("r")).isFalse();
    assertThat(lines(Level.INFO))
        .singleElement()
        .satisfies(e -> assertThat(e.getFormattedMessage()).contains("recovered"));
    assertThat(lines(Level.WARN)).hasSize(1);
  }

  @Test
  void ingressMetrics_feedsAnsweredRequestsIntoTheAccuracyWindow() {
    IngressMetrics metrics = new IngressMetrics();
    for (int i = 0; i < 25; i++) {
      metrics.answered("m", "sim-3", 2000, 0, 1984);
    }
    assertThat(metrics.scrape())
        .contains("kvrouter_prediction_mismatch_alert{replica=\"sim-3\"} 1.0");
  }

  @Test
  void withTheDefaults_aReplicaThatStopsMatching_isFlaggedAtItsFifthRequest_afterAnyHistory() {
    PredictionAccuracy defaults =
        PredictionAccuracy.of(
            registry, AccuracySettings.fromConfig(com.typesafe.config.ConfigFactory.load()));
    for (int i = 0; i < 500; i++) {
      defaults.record("r", 1000, 992, 992);
    }
    int requests = 0;
    while (!defaults.alerting("r")) {
      defaults.record("r", 1000, 0, 992);
      requests++;
    }
    assertThat(requests).isEqualTo(5);
    assertThat(defaults.snapshot())
        .containsExactly(new io.kvrouter.protocol.TrackerReport.Accuracy("r", 8, 5, true));
  }

  @Test
  void badSettings_areRejected() {
    assertThatThrownBy(() -> new PredictionAccuracy(registry, 10, 11, 16))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
