package io.kvrouter.systemtest.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Node's test runner over {@code dashboard/prom.test.mjs}: the page's Prometheus text parser and
 * histogram quantile, the arithmetic behind its lag and latency charts. Needs Node only, no
 * browser.
 */
class DashboardScriptsIT {

  @Test
  void pagesPrometheusParsing_passesItsNodeTests() throws Exception {
    String out =
        NodeScript.run(NodeScript.dir(), List.of("node", "--test", "prom.test.mjs"), Map.of(), 60);
    assertThat(out).contains("# fail 0").containsPattern("# pass [1-9]");
  }
}
