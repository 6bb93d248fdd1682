package io.kvrouter.tracker.bench;

import io.kvrouter.tracker.RouteRequest;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The decision of {@link SelectAndReserveBenchmark} (same tree, prompts and clock) without JMH: ten
 * rounds of decisions, each printed as the calling thread's CPU time per decision. A quick check
 * that two builds can be run alternately, so both see the same machine load: on a loaded machine
 * JMH's forks take minutes each and the load moves between them.
 *
 * <p>Run after {@code kv-tracker/bench.sh} built the class path: {@code java -Xmx4g
 * -XX:+UseParallelGC -cp "kv-tracker/target/test-classes:kv-tracker/target/classes:$(cat
 * kv-tracker/target/bench.classpath)" io.kvrouter.tracker.bench.DecisionProbe [promptTokens]
 * [replicas]} (defaults 131072 and 64).
 */
public final class DecisionProbe {

  private DecisionProbe() {}

  public static void main(String[] args) {
    int tokens = args.length > 0 ? Integer.parseInt(args[0]) : 131072;
    int replicas = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    ClusterFixture cluster = new ClusterFixture(replicas, 128, 8192, 42);
    int blocks = tokens / ClusterFixture.BLOCK_SIZE;
    RouteRequest[] requests = new RouteRequest[64];
    for (int i = 0; i < requests.length; i++) {
      requests[i] =
          new RouteRequest(
              "req-" + i, ClusterFixture.MODEL, cluster.prompt(i * 3, blocks, 1000 + i), tokens);
    }
    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
    long now = 0;
    int perRound = Math.max(64, (int) (40000L * 2048 / tokens));
    for (int round = 0; round < 10; round++) {
      long start = cpu.getCurrentThreadCpuTime();
      for (int i = 0; i < perRound; i++) {
        RouteRequest request = requests[i & 63];
        now++;
        cluster.tracker.selectAndReserve(request, now);
        cluster.tracker.released(request.requestId());
        cluster.tracker.expire(now);
      }
      long spent = cpu.getCurrentThreadCpuTime() - start;
      System.out.printf(
          "round %d: %.1f us of thread CPU per decision (%d decisions, %d tokens, %d replicas)%n",
          round, spent / 1e3 / perRound, perRound, tokens, replicas);
    }
  }
}
