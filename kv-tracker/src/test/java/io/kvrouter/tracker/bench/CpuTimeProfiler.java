package io.kvrouter.tracker.bench;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * Process CPU time per operation (all threads of the benchmark JVM: the benchmark thread, GC and
 * JIT), reported next to JMH's wall-clock figure as {@code ·cpu}. On a shared machine a benchmark
 * thread waits for a core a large share of the time; wall clock then measures the machine's load,
 * while CPU time stays close to the work done (it still grows with cache and SMT contention).
 */
public final class CpuTimeProfiler implements InternalProfiler {

  private final com.sun.management.OperatingSystemMXBean os =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private long start;

  @Override
  public String getDescription() {
    return "process CPU time per operation";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    start = os.getProcessCpuTime();
  }

  @Override
  public Collection<? extends Result> afterIteration(
      BenchmarkParams benchmarkParams, IterationParams iterationParams, IterationResult result) {
    long cpu = os.getProcessCpuTime() - start;
    long ops = result.getMetadata().getMeasuredOps();
    double perOp = ops == 0 ? Double.NaN : cpu / 1000.0 / ops;
    return List.of(new ScalarResult("·cpu", perOp, "us/op", AggregationPolicy.AVG));
  }
}
