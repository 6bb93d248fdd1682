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
 * JIT), reported next to JMH's wall-clock figure as {@code ·cpu}, and the CPU time of JMH's worker
 * threads alone as {@code ·threadcpu} (without the JIT compiler still at work and the GC threads,
 * whose share swings from one iteration to the next on a loaded machine). On a shared machine a
 * benchmark thread waits for a core a large share of the time; wall clock then measures the
 * machine's load, while CPU time stays close to the work done (it still grows with cache and SMT
 * contention).
 */
public final class CpuTimeProfiler implements InternalProfiler {

  private final com.sun.management.OperatingSystemMXBean os =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private final java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final java.util.Map<Long, Long> workerStart = new java.util.HashMap<>();
  private long start;

  @Override
  public String getDescription() {
    return "process CPU time per operation";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    workerStart.clear();
    for (java.lang.management.ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && info.getThreadName().contains("jmh-worker")) {
        workerStart.put(info.getThreadId(), threads.getThreadCpuTime(info.getThreadId()));
      }
    }
    start = os.getProcessCpuTime();
  }

  @Override
  public Collection<? extends Result> afterIteration(
      BenchmarkParams benchmarkParams, IterationParams iterationParams, IterationResult result) {
    long cpu = os.getProcessCpuTime() - start;
    long worker = 0;
    for (java.lang.management.ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && info.getThreadName().contains("jmh-worker")) {
        long now = threads.getThreadCpuTime(info.getThreadId());
        worker += now - workerStart.getOrDefault(info.getThreadId(), 0L);
      }
    }
    long ops = result.getMetadata().getMeasuredOps();
    double perOp = ops == 0 ? Double.NaN : cpu / 1000.0 / ops;
    double workerPerOp = ops == 0 ? Double.NaN : worker / 1000.0 / ops;
    return List.of(
        new ScalarResult("·cpu", perOp, "us/op", AggregationPolicy.AVG),
        new ScalarResult("·threadcpu", workerPerOp, "us/op", AggregationPolicy.AVG));
  }
}
