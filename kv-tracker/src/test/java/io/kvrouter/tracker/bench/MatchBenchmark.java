package io.kvrouter.tracker.bench;

import io.kvrouter.tracker.index.MatchResult;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The match alone (no ranking, no reservation) of a 128k-token prompt on the same 1M-block tree as
 * {@link SelectAndReserveBenchmark}: the memory-bound part of a decision. The prompt's first three
 * quarters are cached on one replica, so the walk stops after 6,144 blocks.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MatchBenchmark {

  @Param({"131072"})
  public int promptTokens;

  private ClusterFixture cluster;
  private long[][] prompts;
  private final MatchResult match = new MatchResult();
  private int next;

  @Setup(Level.Trial)
  public void build() {
    cluster = new ClusterFixture(8, 128, 8192, 42);
    prompts = new long[16][];
    for (int i = 0; i < prompts.length; i++) {
      prompts[i] = cluster.prompt(i * 7, promptTokens / ClusterFixture.BLOCK_SIZE, 1000 + i);
    }
  }

  @Benchmark
  public int match() {
    long[] prompt = prompts[next];
    next = (next + 1) & 15;
    cluster.tracker.match(prompt, prompt.length, match);
    return match.longest();
  }
}
