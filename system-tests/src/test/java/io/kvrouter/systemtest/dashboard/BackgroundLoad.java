package io.kvrouter.systemtest.dashboard;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.testing.LoopbackHttp;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Steady chat traffic across every ingress until closed: {@code workers} threads, each sending one
 * request at a time, conversations sharing a few long system prompts so the engines hit their
 * caches and the event plane keeps moving. Counts answers and failures.
 */
final class BackgroundLoad implements AutoCloseable {

  private final ExecutorService pool;
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicLong ok = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();

  BackgroundLoad(List<String> ingressUrls, String model, int workers) {
    pool = Executors.newFixedThreadPool(workers);
    for (int w = 0; w < workers; w++) {
      int worker = w;
      pool.execute(() -> drive(ingressUrls, model, worker));
    }
  }

  private void drive(List<String> ingressUrls, String model, int worker) {
    long n = 0;
    while (running.get()) {
      n++;
      ObjectNode body =
          LoopbackHttp.JSON.createObjectNode().put("model", model).put("max_tokens", 8);
      ArrayNode messages = body.putArray("messages");
      messages
          .addObject()
          .put("role", "system")
          .put("content", PseudoWords.words(1000 + (n % 4), 300));
      messages
          .addObject()
          .put("role", "user")
          .put("content", PseudoWords.words(worker * 1_000_000L + n, 40));
      String url =
          ingressUrls.get((int) ((worker + n) % ingressUrls.size())) + "/v1/chat/completions";
      try {
        int status = LoopbackHttp.post(url, body).statusCode();
        (status == 200 ? ok : failed).incrementAndGet();
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        failed.incrementAndGet();
      }
    }
  }

  long answered() {
    return ok.get();
  }

  long failed() {
    return failed.get();
  }

  @Override
  public void close() throws InterruptedException {
    running.set(false);
    pool.shutdown();
    if (!pool.awaitTermination(60, TimeUnit.SECONDS)) {
      pool.shutdownNow();
    }
  }
}
