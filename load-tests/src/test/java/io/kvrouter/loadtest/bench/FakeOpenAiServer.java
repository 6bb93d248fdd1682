package io.kvrouter.loadtest.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tiny OpenAI-compatible streaming server on 127.0.0.1 for tests: {@code /v1/completions} and
 * {@code /v1/chat/completions} stream {@code chunks} content chunks {@code gapMillis} apart, a
 * usage chunk (100 prompt tokens, 40 cached) and {@code [DONE]}; {@code /metrics} exposes vLLM's
 * prefix-cache counters, which grow by 100 queries and 40 hits per completed request from a
 * non-zero start; {@code /v1/models} lists {@code fake-model}.
 */
final class FakeOpenAiServer implements AutoCloseable {

  enum Mode {
    /** Stream normally. */
    STREAM,
    /** Answer 500 with a JSON error. */
    ERROR_500,
    /** Send one chunk, then end the body without [DONE]. */
    CLOSE_EARLY,
    /** Wait for {@link #release()} (at most 20 s), then stream. */
    HOLD
  }

  static final int PROMPT_TOKENS = 100;
  static final int CACHED_TOKENS = 40;

  private final HttpServer server;
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final Mode mode;
  private final int chunks;
  private final long gapMillis;
  private final CountDownLatch released = new CountDownLatch(1);
  private final CountDownLatch arrivals;
  private final AtomicInteger received = new AtomicInteger();
  private final List<String> bodies = new CopyOnWriteArrayList<>();
  private final AtomicLong queries = new AtomicLong(1000);
  private final AtomicLong hits = new AtomicLong(900);
  private final AtomicLong successes = new AtomicLong(7);

  /**
   * @param expectedArrivals count of the {@link #arrivals()} latch
   */
  FakeOpenAiServer(Mode mode, int chunks, long gapMillis, int expectedArrivals) throws IOException {
    this.mode = mode;
    this.chunks = chunks;
    this.gapMillis = gapMillis;
    this.arrivals = new CountDownLatch(expectedArrivals);
    // Before the JVM's first JDK server, so the simulated engines in this JVM get them too.
    io.kvrouter.sim.JdkHttpServerProperties.apply();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.setExecutor(pool);
    server.createContext("/v1/completions", ex -> generate(ex, false));
    server.createContext("/v1/chat/completions", ex -> generate(ex, true));
    server.createContext("/metrics", this::metrics);
    server.createContext("/ready", ex -> respond(ex, 200, "{\"status\":\"ready\"}"));
    server.createContext(
        "/v1/models",
        ex -> respond(ex, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"fake-model\"}]}"));
    server.start();
  }

  URI base() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** Counts down once per generation request received. */
  CountDownLatch arrivals() {
    return arrivals;
  }

  int received() {
    return received.get();
  }

  /** Generations streamed to their end (the usage chunk sent). */
  long completed() {
    return successes.get() - 7;
  }

  List<String> bodies() {
    return bodies;
  }

  void release() {
    released.countDown();
  }

  private void generate(HttpExchange ex, boolean chat) throws IOException {
    try {
      bodies.add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
      received.incrementAndGet();
      arrivals.countDown();
      switch (mode) {
        case ERROR_500 -> {
          respond(ex, 500, "{\"error\":{\"message\":\"engine exploded\"}}");
          return;
        }
        case HOLD -> {
          if (!released.await(20, TimeUnit.SECONDS)) {
            return;
          }
        }
        default -> {}
      }
      ex.getResponseHeaders().add("Content-Type", "text/event-stream");
      ex.sendResponseHeaders(200, 0);
      OutputStream out = ex.getResponseBody();
      if (chat) {
        frame(
            out,
            "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
                + "{\"role\":\"assistant\",\"content\":\"\"}}]}");
      }
      out.write(": keep-alive comment\n\n".getBytes(StandardCharsets.UTF_8));
      for (int i = 0; i < chunks; i++) {
        if (i > 0) {
          Thread.sleep(gapMillis); // pacing of the fake engine, not synchronisation
        }
        frame(
            out,
            chat
                ? "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w"
                    + i
                    + " \"}}]}"
                : "{\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"w"
                    + i
                    + " \"}]}");
        if (mode == Mode.CLOSE_EARLY) {
          return;
        }
      }
      queries.addAndGet(PROMPT_TOKENS);
      hits.addAndGet(CACHED_TOKENS);
      successes.incrementAndGet();
      frame(
          out,
          "{\"choices\":[],\"usage\":{\"prompt_tokens\":"
              + PROMPT_TOKENS
              + ",\"completion_tokens\":"
              + chunks
              + ",\"total_tokens\":"
              + (PROMPT_TOKENS + chunks)
              + ",\"prompt_tokens_details\":{\"cached_tokens\":"
              + CACHED_TOKENS
              + "}}}");
      frame(out, "[DONE]");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      ex.close();
    }
  }

  private void metrics(HttpExchange ex) throws IOException {
    long q = queries.get();
    long h = hits.get();
    // Split each counter over two label sets, as two engines of one process would report it.
    String text =
        "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in tokens.\n"
            + "# TYPE vllm:prefix_cache_queries_total counter\n"
            + "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"fake-model\"} "
            + (q - 500)
            + ".0\n"
            + "vllm:prefix_cache_queries_total{engine=\"1\",model_name=\"fake-model\"} 5e2\n"
            + "vllm:prefix_cache_queries_created{engine=\"0\",model_name=\"fake-model\"} 1.7e9\n"
            + "# TYPE vllm:prefix_cache_hits_total counter\n"
            + "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"fake-model\"} "
            + (h - 400)
            + "\n"
            + "vllm:prefix_cache_hits_total{engine=\"1\",model_name=\"fake-model\"} 400\n"
            + "vllm:request_success_total{finished_reason=\"length\",model_name=\"fake-model\"} "
            + successes.get()
            + "\n"
            + "vllm:request_success_total{finished_reason=\"stop\",model_name=\"fake-model\"} 0\n"
            + "vllm:e2e_request_latency_seconds_bucket{le=\"+Inf\",model_name=\"fake-model\"} 3\n";
    respond(ex, 200, text);
  }

  private static void frame(OutputStream out, String data) throws IOException {
    out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  private static void respond(HttpExchange ex, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    released.countDown();
    server.stop(0);
    pool.shutdownNow();
  }
}
