package io.kvrouter.loadtest.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Sends requests only to targets that say they are ready, the way a Kubernetes Service or Envoy
 * does with readiness probes: every {@code interval} each target's {@code GET /ready} is polled,
 * and a request meant for a target that last answered anything but 200 (or did not answer) goes to
 * the next ready one. With none ready it goes where it was meant to go (and most likely fails,
 * which the run then shows).
 *
 * <p>Used by rolling-restart runs ({@code kvrouter bench --follow-ready}) so a draining ingress
 * stops receiving new requests while its streams finish. One daemon thread polls; {@link #choose}
 * is lock-free.
 */
final class ReadyTargets implements AutoCloseable {

  private final List<URI> readyUrls;
  private final HttpClient client;
  private final Duration timeout;
  private final AtomicIntegerArray ready;
  private final ScheduledExecutorService poller;

  ReadyTargets(List<URI> targets, HttpClient client, Duration interval) {
    this.readyUrls =
        targets.stream().map(t -> URI.create(BenchEndpoint.root(t) + "/ready")).toList();
    this.client = client;
    Duration five = interval.multipliedBy(5);
    this.timeout = five.compareTo(Duration.ofSeconds(2)) > 0 ? five : Duration.ofSeconds(2);
    this.ready = new AtomicIntegerArray(targets.size());
    pollOnce();
    this.poller =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "bench-ready-poll");
              t.setDaemon(true);
              return t;
            });
    poller.scheduleWithFixedDelay(
        this::pollOnce, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** {@code preferred} when it is ready, else the next ready target after it, else preferred. */
  int choose(int preferred) {
    int n = ready.length();
    for (int k = 0; k < n; k++) {
      int i = (preferred + k) % n;
      if (ready.get(i) == 1) {
        return i;
      }
    }
    return preferred;
  }

  /**
   * The target to try after a connection to {@code failed} could not be opened: {@code failed} is
   * taken as not ready until its next poll, and the next ready target after it is named; when none
   * is ready, the next target after it all the same (Envoy's panic mode: with too few healthy hosts
   * it balances over all of them), since a request nobody accepted may go anywhere. {@code failed}
   * itself only when it is the only target.
   */
  int after(int failed) {
    ready.set(failed, 0);
    return choose((failed + 1) % ready.length());
  }

  private void pollOnce() {
    for (int i = 0; i < readyUrls.size(); i++) {
      int state;
      try {
        int status =
            client
                .send(
                    HttpRequest.newBuilder(readyUrls.get(i)).timeout(timeout).build(),
                    HttpResponse.BodyHandlers.discarding())
                .statusCode();
        state = status == 200 ? 1 : 0;
      } catch (java.net.http.HttpTimeoutException e) {
        continue; // slow to answer is not an answer: keep what the last poll saw
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        state = 0; // refused or reset: nothing serves there
      }
      ready.set(i, state);
    }
  }

  @Override
  public void close() {
    poller.shutdownNow();
  }
}
