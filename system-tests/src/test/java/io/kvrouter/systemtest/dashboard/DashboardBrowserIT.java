package io.kvrouter.systemtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboard in a real browser: Debian's headless Chromium driven by playwright-core through
 * {@code dashboard/dashboard.test.mjs}. Screenshots land in {@code
 * system-tests/target/dashboard-artifacts/} ({@code dashboard.png} is the demo's diverged view).
 * Skipped, with a message, only when {@code /usr/bin/chromium} is absent.
 */
class DashboardBrowserIT {

  static Path dir;

  @BeforeAll
  static void needsChromium() throws Exception {
    Assumptions.assumeTrue(
        Files.isExecutable(NodeScript.CHROMIUM),
        "browser test skipped: /usr/bin/chromium is absent (apt-get install -y chromium)");
    dir = NodeScript.dir();
    NodeScript.install(dir);
  }

  /**
   * The demo under load, page on ingress 0: every tracker × replica cell converged; ingress 1's
   * tracker paused → its row lagging, then converged again; one replica corrupted on ingress 1 →
   * that cell diverged.
   */
  @Test
  void demoUnderLoad_pageShowsConvergence_thenALaggingTracker_thenADivergedReplica()
      throws Exception {
    DemoOptions options = DemoOptions.defaults().onFreePorts().withSpeedup(20);
    Path artifacts = NodeScript.artifacts();
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      try (BackgroundLoad load = new BackgroundLoad(cluster.ingressUrls(), options.model(), 4)) {
        NodeScript.run(
            dir,
            List.of("node", "dashboard.test.mjs"),
            Map.of(
                "DASHBOARD_URL", cluster.ingressUrls().get(0),
                "CONTROL_URL", cluster.ingressUrls().get(1),
                "EXPECT_TRACKERS", Integer.toString(options.ingresses()),
                "EXPECT_REPLICAS", Integer.toString(options.engines()),
                "STEPS", "converged,lagging,diverged",
                "DIVERGE_REPLICA", "sim-1",
                "ARTIFACTS", artifacts.resolve("demo").toString(),
                "TIMEOUT_MS", "45000"),
            300);
        assertThat(load.answered()).as("requests answered under the page").isPositive();
      }
    }
    Path shot = artifacts.resolve("demo/dashboard-diverged.png");
    assertThat(shot).isNotEmptyFile();
    Files.copy(shot, artifacts.resolve("dashboard.png"), StandardCopyOption.REPLACE_EXISTING);
  }

  /** The engine with the wrong block size is flagged on the page; the regular one shows ok. */
  @Test
  void mismatchedBlockSize_pageFlagsThatReplica() throws Exception {
    Path artifacts = NodeScript.artifacts();
    try (DemoCluster cluster = DemoCluster.start(MismatchScenario.options())) {
      cluster.awaitReady(Duration.ofSeconds(60));
      MismatchScenario.drive(
          cluster, 44); // 22 per replica under round robin: above the 20 an alert needs
      NodeScript.run(
          dir,
          List.of("node", "dashboard.test.mjs"),
          Map.of(
              "DASHBOARD_URL",
              cluster.ingressUrls().get(0),
              "STEPS",
              "accuracy",
              "MISMATCH_REPLICA",
              MismatchScenario.MISMATCHED,
              "ARTIFACTS",
              artifacts.resolve("mismatch").toString()),
          180);
    }
    assertThat(artifacts.resolve("mismatch/dashboard-accuracy.png")).isNotEmptyFile();
  }

  /**
   * The page against a stand-in ingress that follows the issue-6 contract exactly: the same
   * converged, lagging and diverged steps, independent of the tracker's own implementation.
   */
  @Test
  void pageFollowsTheConsistencyContract_onAStandInIngress() throws Exception {
    ActorTestKit kit = ActorTestKit.create();
    try (MockConsistencyIngress mock = new MockConsistencyIngress(kit.system())) {
      NodeScript.run(
          dir,
          List.of("node", "dashboard.test.mjs"),
          Map.of(
              "DASHBOARD_URL", mock.url(),
              "EXPECT_TRACKERS", "2",
              "EXPECT_REPLICAS", "4",
              "STEPS", "converged,lagging,diverged",
              "DIVERGE_REPLICA", "sim-2",
              "ARTIFACTS", NodeScript.artifacts().resolve("contract").toString()),
          180);
    } finally {
      kit.shutdownTestKit();
    }
  }
}
