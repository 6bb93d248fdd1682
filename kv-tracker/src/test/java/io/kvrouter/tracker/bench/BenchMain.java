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
 * (default: all). System properties {@code bench.warmups} and {@code bench.iterations} (2 s each)
 * set the iterations and {@code bench.param.NAME=v1,v2} restricts a parameter (through {@code
 * BENCH_OPTS} in bench.sh); every figure also gets its process CPU time per operation ({@link
 * CpuTimeProfiler}), the steadier figure on a loaded machine.
 */
public final class BenchMain {

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    int blocks = 1 << 20;
    if (Boolean.getBoolean("bench.skipHeap")) {
      runJmh(args);
      return;
    }
    double[] grown = HeapPerBlock.measure(blocks, false);
    System.out.printf(
        "%nretained heap per indexed block (1,048,576 blocks, 8 replicas, bridge"
            + " included): %.1f bytes grown, ",
        grown[0]);
    double[] sized = HeapPerBlock.measure(blocks, true);
    System.out.printf("%.1f bytes pre-sized%n%n", sized[0]);

    runJmh(args);
  }

  private static void runJmh(String[] args) throws Exception {
    String include = args.length > 0 ? args[0] : "io.kvrouter.tracker.bench.*Benchmark.*";
    OptionsBuilder builder = new OptionsBuilder();
    for (String key : System.getProperties().stringPropertyNames()) {
      if (key.startsWith("bench.param.")) {
        builder.param(key.substring("bench.param.".length()), System.getProperty(key).split(","));
      }
    }
    Options options =
        builder
            .include(include)
            .forks(1)
            .jvmArgs("-Xmx4g", "-XX:+UseParallelGC")
            .warmupIterations(Integer.getInteger("bench.warmups", 2))
            .warmupTime(TimeValue.seconds(2))
            .measurementIterations(Integer.getInteger("bench.iterations", 3))
            .measurementTime(TimeValue.seconds(2))
            .addProfiler(CpuTimeProfiler.class)
            .build();
    for (RunResult result : new Runner(options).run()) {
      System.out.printf(
          "%-70s %s  (CPU %s)%n",
          result.getParams().getBenchmark()
              + " "
              + result.getParams().getParamsKeys().stream()
                  .map(k -> k + "=" + result.getParams().getParam(k))
                  .toList(),
          result.getPrimaryResult(),
          result.getSecondaryResults().get("·cpu"));
    }
  }
}
