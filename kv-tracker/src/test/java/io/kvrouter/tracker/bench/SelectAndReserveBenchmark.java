package io.kvrouter.tracker.bench;

import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.RouteRequest;
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
 * Decision latency: one select-and-reserve (match, rank, reserve, predict) on a tree of about 1M
 * blocks, followed by the release of the same request and an expiry pass so that the state stays
 * stationary. Prompts cycle over 64 prompts on 64 different sequences; three quarters of each
 * prompt is cached on one replica and the first 64 blocks on every replica. The last quarter is
 * new: each decision inserts it as predicted entries, which expire (10 ms TTL, 1 ms per decision)
 * long before the prompt comes round again, so every decision pays for inserting its uncached
 * blocks and, later, for expiring them, as with fresh user suffixes in production.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class SelectAndReserveBenchmark {

  @Param({"2048", "32768", "131072"})
  public int promptTokens;

  @Param({"8", "64"})
  public int replicas;

  private ClusterFixture cluster;
  private RouteRequest[] requests;
  private int next;
  private long now;

  @Setup(Level.Trial)
  public void build() {
    // 128 sequences of 8,192 blocks (128k tokens) = 1,048,576 blocks, plus the shared prefix.
    cluster = new ClusterFixture(replicas, 128, 8192, 42);
    int blocks = promptTokens / ClusterFixture.BLOCK_SIZE;
    requests = new RouteRequest[64];
    for (int i = 0; i < requests.length; i++) {
      requests[i] =
          new RouteRequest(
              "req-" + i,
              ClusterFixture.MODEL,
              cluster.prompt(i * 3, blocks, 1000 + i),
              promptTokens);
    }
  }

  @Benchmark
  public Decision selectAndReserve() {
    RouteRequest request = requests[next];
    next = (next + 1) & 63;
    now++;
    Decision decision = cluster.tracker.selectAndReserve(request, now);
    cluster.tracker.released(request.requestId());
    cluster.tracker.expire(now);
    return decision;
  }
}
