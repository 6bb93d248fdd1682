package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.bench.PseudoWords;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Fair queuing across tenants through two ingresses: a noisy tenant keeping ten times the quiet
 * tenant's requests outstanding does not raise the quiet tenant's p99 latency beyond twice what it
 * is without the noise, measured in the same run (issue 18); asserted at 1.5x, which the fair
 * headroom holds and fair order alone does not (below).
 *
 * <p>Three simulated engines at real speed, each busy at 4 reservations: 12 requests run at once
 * and the rest wait in the ingresses' router queues, where fair queuing applies (an engine's own
 * queue is first come, first served). The quiet tenant runs 4 closed-loop clients (2 per ingress),
 * the noisy one 40, all with the same request shape (a short prompt, 100 output tokens; about 0.7 s
 * end to end). Latency is end to end. Each phase sends 50 requests per quiet client (200 in all, so
 * the p99 is the third slowest), after a warm-up whose latencies are dropped (the first requests
 * through each ingress and engine pay for JIT and new connections). The quiet phase under noise
 * starts once the overload is steady: both router queues hold requests, and every noisy client's
 * first request has ended. Those 40 first requests, sent at once through both ingresses, go past
 * the busy threshold (each ingress fills the replicas on its own view before it hears the other's
 * reservations: up to 8 per replica), which is herding between routers (issue 12), not queueing;
 * instrumented, the quiet requests that met it waited for it to drain (x1.75 in one run).
 *
 * <p>Fair order alone (the queue serves first the tenant holding the fewest slots cluster-wide, and
 * every ingress yields to a peer's tenant holding fewer) cannot bound the tail: the quiet request
 * is first in line, yet waits for some slot to free, and requests of one shape started together end
 * together (one run saw 562 ms without a release anywhere, then 9 within 45 ms), so it may wait up
 * to a whole request. The fair headroom ({@code kvrouter.ingress.traffic.queue.fair-headroom},
 * {@code AdmissionQueue#headroom}) lets a request of a tenant below the share of a waiting tenant
 * go that many requests past a replica's busy threshold and run at once. The quiet tenant's 4
 * concurrent requests fit in 3 replicas x the default headroom of 2; with 1 they do not.
 *
 * <p>Runs on the 2-core machine, 2 Dec 2026 (load average 2-4 unless said; quiet p99 under noise /
 * unloaded): headroom 2 (the default) x1.00, x1.05, x1.06, x1.07, x1.11, x1.13, and x1.20 and x1.06
 * with two CPU-bound processes beside it (load average 6-7; unloaded 672/765 ms p50/p99, under
 * noise 732/921); headroom 1 x1.80, x1.95, x1.92; headroom 0 x1.75, x1.92 (quiet requests found
 * every replica busy 454-481 times per run, against none with headroom 2). The noisy tenant
 * completed 14.5-16.4 requests/s in every run, with or without headroom: it waits only for the
 * slots it would have got. {@code -Dfairness.headroom=N} overrides the default.
 *
 * <p>Earlier attempts, not kept: holding a freed slot back for up to 100 ms for a tenant below its
 * share (x0.86-x2.07 in six runs: the quiet requests that found no held slot still waited for the
 * next wave) and keeping one slot free while such a tenant was active (x1.29-x1.81 in eight runs,
 * and it cost the noisy tenant a fifth of its completions). Before the cluster-wide turn (each
 * ingress ordering its own queue only) a freed slot woke only its own ingress, and the 12 slots
 * split 3-9 between the ingresses (x2.22 in one run).
 *
 * <p>The overload check asks the noisy tenant to complete at least twice the quiet one's requests
 * meanwhile (with every slot busy it holds at least 8 of the 12, the quiet one at most its 4).
 */
class TenantFairnessIT {

  /** Fair headroom per replica, when {@code -Dfairness.headroom=N} overrides the default. */
  static final Integer HEADROOM = Integer.getInteger("fairness.headroom");

  /** Bound on quiet p99 under noise ÷ unloaded: 1.5 (the is 2; runs in the comment). */
  static final double BOUND = 1.5;

  static final int QUIET_CLIENTS = 4;
  static final int NOISY_CLIENTS = 40;
  static final int QUIET_REQUESTS_PER_CLIENT = 50;
  static final int WARM_UP_REQUESTS_PER_CLIENT = 3;

  @Test
  void aNoisyTenant_doesNotRaiseAQuietTenantsP99_beyondOneAndAHalfTimesItsUnloadedFigure()
      throws Exception {
    try (TrafficCluster cluster =
        TrafficCluster.start(
            """
            kvrouter.tracker.busy.max-in-flight = 4
            kvrouter.ingress.queue { capacity = 256, max-wait = 120s }
            %s
            kvrouter.ingress.traffic.tenants.inline {
              quiet { keys = [sk-quiet] }
              noisy { keys = [sk-noisy] }
            }
            """
                .formatted(
                    HEADROOM == null
                        ? ""
                        : "kvrouter.ingress.traffic.queue.fair-headroom = " + HEADROOM),
            3,
            1)) {
      ExecutorService pool = Executors.newFixedThreadPool(QUIET_CLIENTS + NOISY_CLIENTS);
      try {
        // The first requests through each ingress and engine pay for class loading, JIT and new
        // connections: not part of the unloaded figure.
        quiet(cluster, pool, 0, WARM_UP_REQUESTS_PER_CLIENT);
        List<Long> unloaded = quiet(cluster, pool, 1, QUIET_REQUESTS_PER_CLIENT);

        AtomicBoolean noisy = new AtomicBoolean(true);
        AtomicInteger noisyDone = new AtomicInteger();
        List<Future<?>> noise = new ArrayList<>();
        for (int c = 0; c < NOISY_CLIENTS; c++) {
          int client = c;
          noise.add(
              pool.submit(
                  () -> {
                    for (int i = 0; noisy.get(); i++) {
                      send(cluster, client % 2, "sk-noisy", 500_000 + client * 10_000 + i);
                      noisyDone.incrementAndGet();
                    }
                    return null;
                  }));
        }
        // Overload established: requests wait in both ingresses' router queues.
        cluster.await(
            Duration.ofSeconds(60),
            () -> {
              assertThat(cluster.metric(0, "kvrouter_queue_waiting")).isGreaterThan(4);
              assertThat(cluster.metric(1, "kvrouter_queue_waiting")).isGreaterThan(4);
              return null;
            });
        // And steady: the 40 clients' first requests, sent at once through both ingresses, went
        // past the busy threshold (each ingress filled the replicas on its own view before it
        // heard the other's reservations: up to 8 per replica, herding rather than queueing); the
        // quiet phase starts once that first wave has ended.
        cluster.await(
            Duration.ofSeconds(60),
            () -> {
              assertThat(noisyDone.get()).isGreaterThanOrEqualTo(NOISY_CLIENTS);
              return null;
            });
        int noisyBefore = noisyDone.get();
        long start = System.nanoTime();
        List<Long> loaded = quiet(cluster, pool, 2, QUIET_REQUESTS_PER_CLIENT);
        double seconds = (System.nanoTime() - start) / 1e9;
        int noisyDuring = noisyDone.get() - noisyBefore;
        noisy.set(false);
        for (Future<?> f : noise) {
          f.get(5, TimeUnit.MINUTES);
        }

        long p99Unloaded = p99(unloaded);
        long p99Loaded = p99(loaded);
        System.out.printf(
            "TenantFairnessIT: quiet p50/p99 unloaded %d/%d ms, under noise %d/%d ms (x%.2f);"
                + " noisy completed %d in %.1f s (%.1f/s) against quiet %d%n",
            p50(unloaded),
            p99Unloaded,
            p50(loaded),
            p99Loaded,
            p99Loaded / (double) p99Unloaded,
            noisyDuring,
            seconds,
            noisyDuring / seconds,
            loaded.size());
        assertThat(noisyDuring)
            .as("the noisy tenant kept the cluster overloaded meanwhile")
            .isGreaterThanOrEqualTo(2 * loaded.size());
        assertThat((double) p99Loaded).isLessThanOrEqualTo(BOUND * p99Unloaded);
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /**
   * Runs the quiet clients, {@code requests} each, to completion; returns every request's latency
   * in milliseconds.
   */
  static List<Long> quiet(TrafficCluster cluster, ExecutorService pool, int phase, int requests)
      throws Exception {
    List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
    List<Future<?>> clients = new ArrayList<>();
    for (int c = 0; c < QUIET_CLIENTS; c++) {
      int client = c;
      clients.add(
          pool.submit(
              () -> {
                for (int i = 0; i < requests; i++) {
                  long t0 = System.nanoTime();
                  send(cluster, client % 2, "sk-quiet", 100_000 * (phase + 1) + client * 1000 + i);
                  latencies.add((System.nanoTime() - t0) / 1_000_000);
                }
                return null;
              }));
    }
    for (Future<?> f : clients) {
      f.get(5, TimeUnit.MINUTES);
    }
    return latencies;
  }

  static void send(TrafficCluster cluster, int ingress, String key, int seed) throws Exception {
    HttpResponse<String> r =
        cluster.send(
            ingress,
            TrafficCluster.chat(PseudoWords.words(seed, 20), 100, false),
            Map.of("Authorization", "Bearer " + key));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  static long p99(List<Long> values) {
    return percentile(values, 0.99);
  }

  static long p50(List<Long> values) {
    return percentile(values, 0.50);
  }

  static long percentile(List<Long> values, double p) {
    List<Long> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get((int) Math.ceil(p * sorted.size()) - 1);
  }
}
