package io.kvrouter.loadtest.bench;

import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The open-loop HTTP load generator: sends each request of a {@link BenchRequestSource} at its
 * intended time, whether or not earlier ones have finished, spread over the targets by the {@link
 * TargetPolicy}, and records every outcome.
 *
 * <p>Contract: {@link #run} may be called once. It scrapes the engine metrics, then issues requests
 * from the calling thread (building and encoding each request, then parking until it is due; a
 * request whose time has passed is sent at once and charged for its lateness in the corrected
 * latencies), stops issuing at the limits of the {@link BenchConfig}, waits for requests in flight
 * (each ends by the request timeout at the latest), scrapes again, and returns the {@link
 * BenchRun}. Warm-up requests ({@link BenchConfig#warmupPerTarget()}) go before the first scrape
 * and are not recorded. A request due while {@link BenchConfig#concurrencyCap()} requests are in
 * flight is dropped, not delayed. Requests are streamed by the JDK HTTP client (HTTP/1.1, one
 * connection per concurrent request) on a private pool of daemon threads that is shut down at the
 * end.
 *
 * <p>Cost: one {@link RequestOutcome} per request kept until the end (a few dozen bytes plus eight
 * per content chunk); one thread parked in the scheduler, one timer thread, and the HTTP client's
 * threads.
 */
public final class BenchRunner {

  private final BenchConfig config;
  private final RunCounters counters = new RunCounters();
  private boolean used;
  private volatile boolean stopRequested;
  private volatile Thread scheduler;
  private volatile StreamingSender activeSender;
  private Duration followReady;
  private ReadyTargets readyTargets;

  public BenchRunner(BenchConfig config) {
    this.config = config;
  }

  /**
   * Sends requests only to targets whose {@code GET /ready} answered 200 at the last poll, polled
   * every {@code interval} (as a load balancer with readiness probes does); call before {@link
   * #run}.
   */
  public BenchRunner followReadiness(Duration interval) {
    this.followReady = interval;
    return this;
  }

  /**
   * Stops the run early, from any thread (a Ctrl-C hook): no further request is issued, requests in
   * flight end as CANCELLED, and {@link #run} returns soon after with what finished, the engines
   * scraped once more and {@link BenchRun#stoppedEarly()} set.
   */
  public void stop() {
    stopRequested = true;
    Thread t = scheduler;
    if (t != null) {
      LockSupport.unpark(t);
    }
    StreamingSender s = activeSender;
    if (s != null) {
      s.cancelAll();
    }
  }

  /** Live counts for a progress display; valid before, during and after {@link #run}. */
  public RunCounters counters() {
    return counters;
  }

  /**
   * Runs the benchmark.
   *
   * @throws IllegalStateException if called twice, or if no model was configured and none could be
   *     discovered, or if a warm-up request fails
   * @throws InterruptedException if the calling thread is interrupted (requests in flight are
   *     abandoned)
   */
  public BenchRun run(BenchRequestSource source) throws InterruptedException {
    synchronized (this) {
      if (used) {
        throw new IllegalStateException("a BenchRunner runs once");
      }
      used = true;
    }
    ExecutorService httpPool = Executors.newCachedThreadPool(daemon("bench-http"));
    ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(daemon("bench-timer"));
    try {
      HttpClient client =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(min(config.requestTimeout(), Duration.ofSeconds(10)))
              .executor(httpPool)
              .build();
      Duration scrapeTimeout = min(config.requestTimeout(), Duration.ofSeconds(10));
      String model =
          config.model() != null
              ? config.model()
              : ModelDiscovery.firstModel(
                  client, config.targets().get(0), config.apiKey(), scrapeTimeout);
      warmUp(new StreamingSender(client, config, model, timer, System::nanoTime));
      if (followReady != null) {
        readyTargets = new ReadyTargets(config.targets(), client, followReady);
      }
      EngineMetricsScraper scraper = new EngineMetricsScraper(client, scrapeTimeout);
      List<EngineSnapshot> before = scraper.scrapeAll(config.engineMetrics());

      Instant startedAt = Instant.now();
      long origin = System.nanoTime();
      counters.started(origin);
      StreamingSender sender =
          new StreamingSender(client, config, model, timer, () -> System.nanoTime() - origin);
      activeSender = sender;
      scheduler = Thread.currentThread();
      List<CompletableFuture<RequestOutcome>> pending;
      try {
        pending = issue(source, sender, origin);
      } finally {
        scheduler = null;
      }
      long issuedUntil = System.nanoTime() - origin;
      if (stopRequested) {
        sender.cancelAll(); // requests sent while stop() was running
      }

      List<RequestOutcome> outcomes = awaitAll(pending);
      long end = issuedUntil;
      for (RequestOutcome o : outcomes) {
        end = Math.max(end, o.endNanos());
      }
      List<EngineSnapshot> after = scraper.scrapeAll(config.engineMetrics());
      return new BenchRun(
          config, model, source.name(), startedAt, end, outcomes, before, after, stopRequested);
    } finally {
      if (readyTargets != null) {
        readyTargets.close();
      }
      timer.shutdownNow();
      httpPool.shutdownNow();
    }
  }

  /**
   * Sends {@link BenchConfig#warmupPerTarget()} small requests to each target, one at a time.
   *
   * @throws IllegalStateException at the first warm-up request that does not end OK
   */
  private void warmUp(StreamingSender sender) throws InterruptedException {
    int targets = config.targets().size();
    for (int i = 0; i < config.warmupPerTarget() * targets; i++) {
      BenchRequest r =
          new BenchRequest(
              0, null, BenchPrompt.text("warm-up request " + i + ", please ignore"), 2, "");
      RequestOutcome o;
      try {
        o = sender.send(-1 - i, i % targets, r, 0).get();
      } catch (ExecutionException e) {
        throw new IllegalStateException("warm-up request failed", e.getCause());
      }
      if (o.status() != RequestOutcome.Status.OK) {
        throw new IllegalStateException(
            "warm-up request to "
                + config.targets().get(i % targets)
                + " failed: "
                + o.status()
                + " "
                + o.error());
      }
    }
  }

  /** The scheduling loop: one iteration per request, on the calling thread. */
  private List<CompletableFuture<RequestOutcome>> issue(
      BenchRequestSource source, StreamingSender sender, long origin) {
    List<CompletableFuture<RequestOutcome>> pending = new ArrayList<>();
    Semaphore permits = new Semaphore(config.concurrencyCap());
    long deadline = config.maxDuration().toNanos();
    int targets = config.targets().size();
    int sent = 0;
    int index = 0;
    while (!stopRequested
        && source.hasNext()
        && (config.maxRequests() < 0 || index < config.maxRequests())) {
      BenchRequest request = source.next();
      long due = request.offsetNanos();
      if (due > deadline) {
        break;
      }
      StreamingSender.Prepared prepared = sender.prepare(request);
      parkUntil(origin + due);
      if (Thread.currentThread().isInterrupted() || stopRequested) {
        break;
      }
      if (!permits.tryAcquire()) {
        RequestOutcome d = RequestOutcome.dropped(index, request.group(), due);
        counters.finished(d);
        pending.add(CompletableFuture.completedFuture(d));
        index++;
        continue;
      }
      counters.markSent();
      CompletableFuture<RequestOutcome> f =
          sender.send(index, target(sent, request.group(), targets), prepared, due);
      f.whenComplete(
          (o, t) -> {
            permits.release();
            if (o != null) {
              counters.finished(o);
            }
          });
      pending.add(f);
      sent++;
      index++;
    }
    return pending;
  }

  private int target(int sent, String group, int targets) {
    int preferred = config.targetPolicy().pick(sent, group, targets);
    return readyTargets == null ? preferred : readyTargets.choose(preferred);
  }

  /** Waits for every request; each ends by its own timeout, so the bound here is a safety net. */
  private List<RequestOutcome> awaitAll(List<CompletableFuture<RequestOutcome>> pending)
      throws InterruptedException {
    CompletableFuture<Void> all =
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    try {
      all.get(config.requestTimeout().plusSeconds(30).toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // outcome futures never complete exceptionally; a stuck one is reported below
    }
    List<RequestOutcome> outcomes = new ArrayList<>(pending.size());
    for (int i = 0; i < pending.size(); i++) {
      RequestOutcome o = pending.get(i).getNow(null);
      if (o == null) {
        o = RequestOutcome.neverCompleted(i);
      }
      outcomes.add(o);
    }
    return outcomes;
  }

  private void parkUntil(long nanoTime) {
    long remaining;
    while (!stopRequested && (remaining = nanoTime - System.nanoTime()) > 0) {
      LockSupport.parkNanos(remaining);
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
    }
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
