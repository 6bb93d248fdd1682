package io.kvrouter.tracker.bench;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the kv-tracker benchmarks briefly and prints the figures: retained heap per indexed block,
 * decision latency, event apply throughput, block-key cost. Run with {@code kv-tracker/bench.sh}
 * from the repository root (a few minutes). Arguments, if any, are a regex of benchmarks to run
 * (default: all).
 */
public final class BenchMain {

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    int blocks = 1 << 20;
    double[] grown = HeapPerBlock.measure(blocks, false);
    System.out.printf(
        "%nretained heap per indexed block (1,048,576 blocks, 8 replicas, bridge"
            + " included): %.1f bytes grown, ",
        grown[0]);
    double[] sized = HeapPerBlock.measure(blocks, true);
    System.out.printf("%.1f bytes pre-sized%n%n", sized[0]);

    String include = args.length > 0 ? args[0] : "io.kvrouter.tracker.bench.*Benchmark.*";
    Options options =
        new OptionsBuilder()
            .include(include)
            .forks(1)
            .jvmArgs("-Xmx4g", "-XX:+UseParallelGC")
            .warmupIterations(2)
            .warmupTime(TimeValue.seconds(2))
            .measurementIterations(3)
            .measurementTime(TimeValue.seconds(2))
            .build();
    for (RunResult result : new Runner(options).run()) {
      System.out.printf(
          "%-70s %s%n",
          result.getParams().getBenchmark()
              + " "
              + result.getParams().getParamsKeys().stream()
                  .map(k -> k + "=" + result.getParams().getParam(k))
                  .toList(),
          result.getPrimaryResult());
    }
  }
}
