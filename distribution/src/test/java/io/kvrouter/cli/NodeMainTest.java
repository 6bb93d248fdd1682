package io.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** The node's command: what the production image runs. */
class NodeMainTest {

  @Test
  void help_listsTheNodesTwoJobsOnly() {
    CommandLine cli = NodeMain.commandLine();
    StringWriter out = new StringWriter();
    cli.setOut(new PrintWriter(out));
    assertThat(cli.execute("--help")).isZero();
    assertThat(out.toString())
        .containsPattern("(?m)^\\s+ingress\\s")
        .containsPattern("(?m)^\\s+agent\\s")
        .doesNotContainPattern("(?m)^\\s+(demo|lab|bench|sim-engine)\\s");
  }

  /** Without the check the node would start and run (the timeout fails the test then). */
  @Test
  @Timeout(60)
  void anUnknownPolicy_stopsTheIngressBeforeItStarts_namingTheKnownOnes() {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = NodeMain.commandLine().execute("ingress", "--policy", "nope", "--port", "0");
    } finally {
      System.setErr(err);
    }
    assertThat(code).isEqualTo(2);
    assertThat(captured.toString(StandardCharsets.UTF_8))
        .contains("kvrouter.tracker.policy.name: unknown policy 'nope'")
        .contains("kvrouter");
  }
}
