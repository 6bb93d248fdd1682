package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProgressReporterTest {

  private static RunCounters counters(int sent, int ok, int errors) {
    RunCounters c = new RunCounters();
    for (int i = 0; i < sent; i++) {
      c.markSent();
    }
    for (int i = 0; i < ok + errors; i++) {
      c.finished(
          new RequestOutcome(
              i,
              0,
              "",
              i < ok ? RequestOutcome.Status.OK : RequestOutcome.Status.HTTP_ERROR,
              200,
              null,
              0,
              0,
              1,
              new long[] {1},
              5,
              3,
              -1));
    }
    return c;
  }

  @Test
  void barShowsDoneOverExpected_andCounts() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ProgressReporter p =
        new ProgressReporter(
            counters(6, 4, 1),
            10,
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            true,
            60)) {
      assertThat(p.line())
          .startsWith(
              "[###############...............] 5/10 ok 4 err 1 timeout 0 drop 0 in-flight 1")
          .endsWith("15 tok");
    }
    assertThat(bytes.toString(StandardCharsets.UTF_8))
        .startsWith("\r[###############")
        .endsWith("\n");
  }

  @Test
  void plainMode_printsWholeLines_andUnknownTotalsShowCountsOnly() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ProgressReporter p =
        new ProgressReporter(
            counters(2, 2, 0),
            -1,
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            false,
            3600)) {
      assertThat(p.line()).startsWith("2 done ok 2");
    }
    assertThat(bytes.toString(StandardCharsets.UTF_8))
        .startsWith("bench: 2 done ok 2")
        .doesNotContain("\r");
  }
}
