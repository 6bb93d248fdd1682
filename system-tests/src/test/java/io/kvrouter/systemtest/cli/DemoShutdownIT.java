package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * {@code kvrouter demo} as users stop it, with SIGTERM (Ctrl-C is SIGINT, the same hooks): its
 * nodes leave the cluster in turn and the process ends without a coordinated-shutdown phase timing
 * out. Before, Pekko's remoting hook cut every connection at once while the nodes were still
 * leaving, and the last one waited out its 10 s cluster-exiting timeout.
 */
class DemoShutdownIT {

  /** The demo on free ports, in a JVM of its own with a 1 GiB heap. */
  private static List<String> command() {
    List<String> command =
        new ArrayList<>(
            List.of(
                NodeClassArchive.java(),
                "-Xmx1g",
                "-Dai.djl.offline=true",
                "-jar",
                FatJarNodeIT.fatJar().toString()));
    command.addAll(NodeClassArchive.DEMO_ON_FREE_PORTS);
    return command;
  }

  @Test
  void sigterm_endsTheDemoWithoutAShutdownPhaseTimingOut() throws Exception {
    Path log = Files.createTempFile("kvrouter-demo", ".log");
    Process demo =
        new ProcessBuilder(command())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    ActorTestKit kit = ActorTestKit.create();
    try {
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(120),
              Duration.ofMillis(200),
              () -> {
                assertThat(demo.isAlive()).as("demo alive; its log:%n%s", read(log)).isTrue();
                assertThat(read(log)).contains("kvrouter demo ready");
                return null;
              });

      demo.destroy(); // SIGTERM

      assertThat(demo.waitFor(60, TimeUnit.SECONDS)).as("demo ended; log:%n%s", read(log)).isTrue();
      String out = read(log);
      assertThat(out).as(out).doesNotContain("timed out after");
      assertThat(out).as(out).doesNotContain("SBR took decision");
    } finally {
      demo.destroyForcibly().waitFor();
      kit.shutdownTestKit();
      Files.deleteIfExists(log);
    }
  }

  private static String read(Path log) {
    try {
      return Files.readString(log);
    } catch (java.io.IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }
}
