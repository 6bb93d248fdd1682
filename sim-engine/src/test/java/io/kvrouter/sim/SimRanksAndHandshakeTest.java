package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.metrics.PrometheusText;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The simulated engine as a data-parallel vLLM (ranks behind one port, chosen by {@code
 * X-data-parallel-rank}) and as either side of the prefill/decode handshake.
 */
class SimRanksAndHandshakeTest {

  private static SimEngine ranked;
  private static SimEngine prefill;
  private static SimEngine decode;

  private static SimEngineSettings settings() {
    return SimEngineSettings.loopback()
        .withModel("m")
        .withEndpoints(0, null, null)
        .withEngine(
            SimEngineConfig.defaults().withNumBlocks(512).withTiming(new MockerTimingModel(50)));
  }

  @BeforeAll
  static void start() throws Exception {
    ranked = SimEngine.start(settings().withDataParallel(0, 3));
    prefill = SimEngine.start(settings());
    decode = SimEngine.start(settings().withTransfer(new SimKvTransfer(1024, 1e9, 0)));
  }

  @AfterAll
  static void stop() {
    ranked.close();
    prefill.close();
    decode.close();
  }

  private static final String PROMPT = "the quick brown fox jumps over the lazy dog ".repeat(8);

  private static JsonNode complete(SimEngine e, String rank, ObjectNode extra) throws Exception {
    ObjectNode body = LoopbackHttp.JSON.createObjectNode();
    body.put("model", "m").put("prompt", PROMPT).put("max_tokens", 2);
    if (extra != null) {
      body.setAll(extra);
    }
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(e.baseUrl() + "/v1/completions"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
    if (rank != null) {
      b.header("x-data-parallel-rank", rank); // header names are case-insensitive
    }
    HttpResponse<String> r =
        LoopbackHttp.CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    JsonNode out = LoopbackHttp.JSON.readTree(r.body());
    ((ObjectNode) out).put("status", r.statusCode());
    return out;
  }

  private static int cached(JsonNode answer) {
    return answer.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt();
  }

  private static JsonNode lastLogged(SimEngine e) throws Exception {
    JsonNode list = LoopbackHttp.getJson(e.baseUrl() + "/sim/requests").path("requests");
    return list.get(list.size() - 1);
  }

  @Test
  void eachRankKeepsItsOwnCacheAndTheHeaderChoosesTheRank() throws Exception {
    assertThat(cached(complete(ranked, "2", null))).isZero();
    assertThat(lastLogged(ranked).path("dp_rank").asInt()).isEqualTo(2);
    assertThat(cached(complete(ranked, "2", null)))
        .as("rank 2 holds the prompt now")
        .isGreaterThan(0);
    assertThat(cached(complete(ranked, "1", null))).as("rank 1 has its own cache").isZero();
    assertThat(lastLogged(ranked).path("dp_rank").asInt()).isEqualTo(1);
  }

  @Test
  void aRankOutsideTheEngineIsRefusedWithA400() throws Exception {
    JsonNode r = complete(ranked, "3", null);
    assertThat(r.path("status").asInt()).isEqualTo(400);
    assertThat(r.path("error").path("message").asText()).contains("data_parallel_rank 3");
  }

  @Test
  void metricsCarryOneSamplePerRankLabelledWithItsEngineIndex() throws Exception {
    PrometheusText.Parsed m =
        PrometheusText.parse(LoopbackHttp.getOk(ranked.baseUrl() + "/metrics"));
    assertThat(
            m.samples().stream()
                .filter(s -> s.name().equals("vllm:num_requests_running"))
                .map(s -> s.labels().get("engine")))
        .containsExactly("0", "1", "2");
  }

  @Test
  void aPrefillAnswersWithTheTransferParametersThatADecodeTakesAndCachesAsStored()
      throws Exception {
    ObjectNode ask = LoopbackHttp.JSON.createObjectNode();
    ObjectNode kv = ask.putObject("kv_transfer_params");
    kv.put("do_remote_decode", true).put("do_remote_prefill", false);
    kv.putNull("remote_engine_id").putNull("remote_block_ids");
    kv.putNull("remote_host").putNull("remote_port");
    ask.put("max_tokens", 1);
    JsonNode p = complete(prefill, null, ask);
    JsonNode params = p.path("kv_transfer_params");
    assertThat(params.path("do_remote_prefill").asBoolean()).isTrue();
    assertThat(params.path("do_remote_decode").asBoolean()).isFalse();
    for (String f :
        new String[] {
          "remote_engine_id", "remote_request_id", "remote_host", "remote_port", "tp_size"
        }) {
      assertThat(params.has(f)).as(f).isTrue();
    }
    int promptBlocks = (p.path("usage").path("prompt_tokens").asInt() - 1) / 16;
    assertThat(params.path("remote_block_ids").get(0).size()).isGreaterThanOrEqualTo(promptBlocks);
    assertThat(lastLogged(prefill).path("kv_transfer").asText()).isEqualTo("prefill");

    ObjectNode carry = LoopbackHttp.JSON.createObjectNode();
    carry.set("kv_transfer_params", params);
    JsonNode d = complete(decode, null, carry);
    assertThat(d.path("status").asInt()).isEqualTo(200);
    assertThat(lastLogged(decode).path("kv_transfer").asText()).isEqualTo("decode");
    assertThat(cached(d)).as("nothing was in the decode engine's own cache").isZero();
    long[] held = decode.cachedBlockHashes();
    assertThat(held.length)
        .as("the transferred blocks are cached (and published)")
        .isGreaterThanOrEqualTo(promptBlocks);
    long[] expected =
        decode
            .engine()
            .query(c -> c.blockHashes(ByteTokenizer.encode(PROMPT), null, null))
            .get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(held).contains(Arrays.copyOf(expected, promptBlocks));
  }

  @Test
  void aDecodeWithIncompleteParametersPrefillsLocallyAsVllmDoes() throws Exception {
    ObjectNode carry = LoopbackHttp.JSON.createObjectNode();
    carry.putObject("kv_transfer_params").put("do_remote_prefill", true);
    JsonNode d = complete(prefill, null, carry);
    assertThat(d.path("status").asInt()).isEqualTo(200);
    assertThat(lastLogged(prefill).path("kv_transfer").asText()).isEqualTo("invalid");
  }
}
