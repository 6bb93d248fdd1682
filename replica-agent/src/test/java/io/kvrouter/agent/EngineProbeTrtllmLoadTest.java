package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.sun.net.httpserver.HttpServer;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.testing.TrtllmEngineDouble;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The load heartbeat of a TensorRT-LLM replica, scraped from the engine double's JSON {@code GET
 * /metrics} (iteration stats that each call drains, closed until the next submission, as
 * trtllm-serve serves them): running, waiting and KV usage come from the latest iteration, an empty
 * answer reads as idle, and an answer that is not iteration stats leaves the load unknown.
 */
class EngineProbeTrtllmLoadTest {

  private static final int BS = 4;

  private static EngineProbe probe(String url) {
    return new EngineProbe(url, Duration.ofSeconds(2), -1, EngineSettings.TENSORRT_LLM);
  }

  private static ReplicaLoad load(EngineProbe probe) throws Exception {
    return probe.scrape("r1", 7).toCompletableFuture().get(10, TimeUnit.SECONDS).load();
  }

  @Test
  void heartbeatCarriesTheLatestIterationsFigures_thenIdleOnceDrained() throws Exception {
    try (TrtllmEngineDouble engine = new TrtllmEngineDouble("m", BS, 100, 0, 10_000)) {
      EngineProbe probe = probe(engine.baseUrl());
      engine.iterate(5, 4, 40);
      engine.iterate(3, 2, 25);

      ReplicaLoad busy = load(probe);
      assertThat(busy.replicaId()).isEqualTo("r1");
      assertThat(busy.epoch()).isEqualTo(7);
      assertThat(busy.running()).isEqualTo(3);
      assertThat(busy.waiting()).isEqualTo(2);
      assertThat(busy.kvUsage()).isCloseTo(0.25, within(1e-9));

      // The stats were drained and stay closed until a submission: no iteration seen, idle.
      ReplicaLoad quiet = load(probe);
      assertThat(quiet.running()).isZero();
      assertThat(quiet.waiting()).isZero();
      assertThat(quiet.kvUsage()).isZero();

      // A served request is an iteration with itself active, holding its blocks.
      engine.complete(new int[] {1, 2, 3, 4, 5, 6, 7});
      ReplicaLoad served = load(probe);
      assertThat(served.running()).isEqualTo(1);
      assertThat(served.kvUsage()).isCloseTo(0.02, within(1e-9));
    }
  }

  @Test
  void identityDoesNotTakeTheStats() throws Exception {
    try (TrtllmEngineDouble engine = new TrtllmEngineDouble("m", BS, 100, 0, 10_000)) {
      EngineProbe probe = probe(engine.baseUrl());
      engine.iterate(2, 1, 10);

      assertThat(
              probe
                  .identity(EngineSettings.TENSORRT_LLM, "")
                  .toCompletableFuture()
                  .get(10, TimeUnit.SECONDS)
                  .version())
          .isEqualTo(TrtllmEngineDouble.VERSION);

      assertThat(load(probe).running()).isEqualTo(2);
    }
  }

  @Test
  void prometheusTextOnATrtllmReplica_failsTheScrapeWithAClearReason() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/metrics",
        exchange -> {
          byte[] bytes = "vllm:num_requests_running 3.0\n".getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    server.start();
    try {
      EngineProbe probe = probe("http://127.0.0.1:" + server.getAddress().getPort());
      assertThatThrownBy(() -> load(probe))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("TensorRT-LLM /metrics is not JSON");
    } finally {
      server.stop(0);
    }
  }
}
