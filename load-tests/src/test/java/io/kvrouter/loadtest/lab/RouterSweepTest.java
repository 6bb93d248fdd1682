package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@org.junit.jupiter.api.Timeout(300)
class RouterSweepTest {

  @Test
  void sweep_reportsEveryPolicyAtEveryRouterCount_forBothArrivalModes(@TempDir Path out)
      throws Exception {
    Workload w = Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(120);
    LabConfig config =
        LabConfig.defaults(4)
            .withPolicies(List.of("kvrouter", "kvrouter/strict"))
            .withRouters(1, 5_000);
    List<RouterSweep.Point> points =
        RouterSweep.run(w, config, List.of(1, 2), true, true, 3, 2, "kvrouter lab --test");

    assertThat(points).extracting(RouterSweep.Point::routers).containsExactly(1, 2, 1, 2);
    assertThat(points.get(1).results().config().routers()).isEqualTo(2);
    String report = RouterSweep.render(points, "kvrouter lab --test");
    assertThat(report)
        .contains("| K=1 | K=2 |")
        .contains("| recorded | kvrouter |")
        .contains("| spread | kvrouter/strict |");
    RouterSweep.write(points, "kvrouter lab --test", out);
    assertThat(out.resolve("sweep.md")).exists();
    assertThat(Files.size(out.resolve("sweep_p90.png"))).isPositive();
    assertThat(Files.size(out.resolve("sweep_hit.png"))).isPositive();
  }
}
