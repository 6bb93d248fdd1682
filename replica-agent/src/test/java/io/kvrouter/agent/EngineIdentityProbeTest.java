package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.EngineIdentity;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Which engine a replica is, asked of a fake engine: the version its {@code GET /version} gives and
 * the hash algorithm and block size its {@code vllm:cache_config_info} labels give; an engine that
 * answers neither is announced as unknown, never held back.
 */
class EngineIdentityProbeTest {

  private HttpServer server;

  /** A fake engine answering {@code path -> body} with 200 and everything else with 404. */
  private String engine(Map<String, String> answers) throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          String body = answers.get(exchange.getRequestURI().getPath());
          byte[] bytes =
              (body == null ? "{\"detail\":\"Not Found\"}" : body).getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(body == null ? 404 : 200, bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    server.start();
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
  }

  private static EngineIdentity identity(String url, String hashAlgo) throws Exception {
    return new EngineProbe(url, Duration.ofSeconds(2))
        .identity("vllm", hashAlgo)
        .toCompletableFuture()
        .get(5, TimeUnit.SECONDS);
  }

  @Test
  void engineThatAnswersVersionAndCacheConfig_isAnnouncedWithThem() throws Exception {
    String url =
        engine(
            Map.of(
                "/version",
                "{\"version\":\"0.11.0\"}",
                "/metrics",
                "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
                    + "# TYPE vllm:cache_config_info gauge\n"
                    + "vllm:cache_config_info{block_size=\"32\",enable_prefix_caching=\"True\","
                    + "prefix_caching_hash_algo=\"sha256_cbor\"} 1.0\n"
                    + "vllm:num_requests_running{engine=\"0\"} 0.0\n"));

    assertThat(identity(url, ""))
        .isEqualTo(new EngineIdentity("vllm", "0.11.0", "sha256_cbor", 32));
    assertThat(identity(url, "builtin").hashAlgo())
        .as("what the operator configured wins")
        .isEqualTo("builtin");
  }

  @Test
  void engineThat404s_isAnnouncedWithItsVersionUnknown_andTheProbeDoesNotFail() throws Exception {
    String url = engine(Map.of());

    EngineIdentity id = identity(url, "");

    assertThat(id).isEqualTo(new EngineIdentity("vllm", "unknown", "unknown", 0));
  }

  @Test
  void engineThatIsNotThere_isAnnouncedUnknown_too() throws Exception {
    String url = engine(Map.of());
    server.stop(0);
    server = null;

    assertThat(identity(url, "sha256").version()).isEqualTo(EngineIdentity.UNKNOWN);
  }

  @Test
  void probeVerdicts_becomeTheAnnouncedAlignment() {
    assertThat(new AlignmentProbe.Result(AlignmentProbe.Outcome.ALIGNED, "", 16).status())
        .isEqualTo(AlignmentStatus.ALIGNED);
    assertThat(
            new AlignmentProbe.Result(AlignmentProbe.Outcome.BLOCK_SIZE, "block size: 32", 32)
                .status())
        .isEqualTo(AlignmentStatus.unaligned("block size: 32"));
    assertThat(
            new AlignmentProbe.Result(AlignmentProbe.Outcome.INCONCLUSIVE, "no block came")
                .status())
        .isEqualTo(AlignmentStatus.unchecked("no block came"));
  }
}
