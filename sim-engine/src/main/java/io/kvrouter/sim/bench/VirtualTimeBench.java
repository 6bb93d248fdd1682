package io.kvrouter.sim.bench;

import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineCore;
import io.kvrouter.sim.SimRequest;
import io.kvrouter.sim.VirtualTimeDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * How many simulated requests per wall-clock second the virtual-time core replays. Workload:
 * SGLang-style shared prefixes (G groups × a P-token shared prefix, then Q unique tokens, O output
 * tokens), Poisson arrivals at R requests per simulated second, vLLM-default engine shape.
 *
 * <p>Usage: {@code VirtualTimeBench [requests=20000] [rate=20] [groups=64] [prefix=2048]
 * [question=128] [output=128]}. Prints figures; asserts nothing.
 */
public final class VirtualTimeBench {

  private VirtualTimeBench() {}

  public static void main(String[] args) {
    int n = arg(args, 0, 20_000);
    double rate = arg(args, 1, 20);
    int groups = arg(args, 2, 64);
    int prefix = arg(args, 3, 2048);
    int question = arg(args, 4, 128);
    int output = arg(args, 5, 128);
    Random rnd = new Random(7);
    List<VirtualTimeDriver.TimedRequest> arrivals = new ArrayList<>(n);
    double t = 0;
    for (int i = 0; i < n; i++) {
      t += -Math.log(1 - rnd.nextDouble()) / rate;
      int g = rnd.nextInt(groups);
      int[] prompt = new int[prefix + question];
      for (int k = 0; k < prefix; k++) {
        prompt[k] = 1000 + g * 7919 + k;
      }
      for (int k = prefix; k < prompt.length; k++) {
        prompt[k] = rnd.nextInt(30_000);
      }
      arrivals.add(
          new VirtualTimeDriver.TimedRequest(
              (long) (t * 1e6), SimRequest.of("r" + i, prompt, output)));
    }
    // one warm-up run so the JIT has compiled the hot paths, then the measured run
    VirtualTimeDriver.run(
        new SimEngineCore(SimEngineConfig.defaults()), arrivals.subList(0, Math.min(2_000, n)));
    SimEngineCore core = new SimEngineCore(SimEngineConfig.defaults());
    long start = System.nanoTime();
    List<VirtualTimeDriver.RequestResult> results = VirtualTimeDriver.run(core, arrivals);
    double wall = (System.nanoTime() - start) / 1e9;
    double simSeconds =
        results.stream().mapToLong(VirtualTimeDriver.RequestResult::finishMicros).max().orElse(0)
            / 1e6;
    double ttft =
        results.stream()
                .mapToLong(r -> r.firstTokenMicros() - r.arrivalMicros())
                .average()
                .orElse(0)
            / 1e3;
    System.out.printf(
        "virtual-time core: %d requests (%d+%d prompt, %d output tokens, %d groups,"
            + " %.0f req/s offered)%n",
        results.size(), prefix, question, output, groups, rate);
    System.out.printf(
        "  simulated %.1f s in %.2f s wall: %.0f simulated requests/s, %.0fx real" + " time%n",
        simSeconds, wall, results.size() / wall, simSeconds / wall);
    System.out.printf(
        "  prefix hit rate %.3f (tokens), mean TTFT %.1f ms (simulated)," + " preemptions %d%n",
        (double) core.prefixCacheHits() / core.prefixCacheQueries(), ttft, core.preemptions());
  }

  private static int arg(String[] a, int i, int def) {
    return a.length > i ? Integer.parseInt(a[i]) : def;
  }

  private static double arg(String[] a, int i, double def) {
    return a.length > i ? Double.parseDouble(a[i]) : def;
  }
}
