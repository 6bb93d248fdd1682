package io.kvrouter.sim.bench;

import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many requests per second one real-time sim engine serves over HTTP: starts an engine
 * in-process (loopback, free ports, KV events on) and runs C closed-loop clients for D seconds,
 * each sending non-streaming completions of a shared-prefix prompt.
 *
 * <p>Usage: {@code RealTimeBench [speedup=1] [clients=64] [seconds=10] [promptChars=1024]
 * [maxTokens=32]}. The clients share the machine with the engine. Prints figures; asserts nothing.
 */
public final class RealTimeBench {

  private RealTimeBench() {}

  public static void main(String[] args) throws Exception {
    double speedup = args.length > 0 ? Double.parseDouble(args[0]) : 1;
    int clients = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    int promptChars = args.length > 3 ? Integer.parseInt(args[3]) : 1024;
    int maxTokens = args.length > 4 ? Integer.parseInt(args[4]) : 32;
    SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withEngine(SimEngineConfig.defaults().withTiming(new MockerTimingModel(speedup))));
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    String shared =
        "shared system prompt. ".repeat(promptChars / 22 + 1).substring(0, promptChars * 3 / 4);
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      int id = c;
      Thread t =
          new Thread(
              () -> {
                for (long i = 0; System.nanoTime() < deadline; i++) {
                  String q =
                      ("client " + id + " question " + i + " ")
                          .repeat(promptChars / 20 + 1)
                          .substring(0, promptChars - shared.length());
                  String body =
                      "{\"prompt\":\"" + shared + q + "\",\"max_tokens\":" + maxTokens + "}";
                  try {
                    HttpResponse<String> r =
                        http.send(
                            HttpRequest.newBuilder(URI.create(engine.baseUrl() + "/v1/completions"))
                                .timeout(Duration.ofSeconds(60))
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                            HttpResponse.BodyHandlers.ofString());
                    (r.statusCode() == 200 ? done : failed).incrementAndGet();
                  } catch (Exception e) {
                    failed.incrementAndGet();
                  }
                }
              });
      t.start();
      threads.add(t);
    }
    long start = System.nanoTime();
    for (Thread t : threads) {
      t.join();
    }
    double wall = (System.nanoTime() - start) / 1e9;
    var stats = engine.engine().stats();
    System.out.printf(
        "real-time sim engine (speedup %.0f, %d clients, %d-token prompts, %d output"
            + " tokens): %d requests in %.1f s = %.0f req/s (%d failed), prefix hit rate %.3f%n",
        speedup,
        clients,
        promptChars,
        maxTokens,
        done.get(),
        wall,
        done.get() / wall,
        failed.get(),
        (double) stats.prefixHits() / Math.max(1, stats.prefixQueries()));
    engine.close();
    System.exit(0);
  }
}
