package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sim engine's LoRA adapters over HTTP, as vLLM serves them: preloaded with {@code
 * --lora-modules}, loaded and unloaded at run time, listed in {@code /v1/models} with {@code
 * parent}, and requests for an adapter keyed with it.
 */
class SimAdaptersHttpTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private SimEngine engine;

  @BeforeEach
  void start() throws Exception {
    Map<String, String> modules = new LinkedHashMap<>();
    modules.put("sql", "/adapters/sql");
    engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("base")
                .withEndpoints(0, null, null)
                .withApis(SimApis.vllm().withRuntimeLora(true))
                .withLoraModules(modules)
                .withEngine(
                    SimEngineConfig.defaults()
                        .withNumBlocks(256)
                        .withTiming(new MockerTimingModel(20))));
  }

  @AfterEach
  void stop() {
    engine.close();
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return LoopbackHttp.post(engine.baseUrl() + path, body);
  }

  /** id to parent (null for the base model) of every {@code /v1/models} entry, and the roots. */
  private Map<String, String> models(Map<String, String> roots) throws Exception {
    JsonNode list = LoopbackHttp.getJson(engine.baseUrl() + "/v1/models");
    Map<String, String> out = new LinkedHashMap<>();
    for (JsonNode m : list.get("data")) {
      out.put(m.get("id").asText(), m.get("parent").isNull() ? null : m.get("parent").asText());
      roots.put(m.get("id").asText(), m.get("root").asText());
    }
    return out;
  }

  @Test
  void preloadedAndRuntimeAdaptersAreListedWithTheirParentAndPath() throws Exception {
    Map<String, String> roots = new LinkedHashMap<>();
    Map<String, String> parents = new LinkedHashMap<>();
    parents.put("base", null);
    parents.put("sql", "base");
    assertThat(models(roots)).containsExactlyEntriesOf(parents);
    assertThat(roots).containsEntry("sql", "/adapters/sql");

    HttpResponse<String> loaded =
        post("/v1/load_lora_adapter", "{\"lora_name\":\"chat\",\"lora_path\":\"/adapters/chat\"}");
    assertThat(loaded.statusCode()).isEqualTo(200);
    assertThat(loaded.body()).isEqualTo("Success: LoRA adapter 'chat' added successfully.");
    parents.put("chat", "base");
    assertThat(models(roots)).containsExactlyEntriesOf(parents);
    assertThat(roots).containsEntry("chat", "/adapters/chat");

    HttpResponse<String> unloaded = post("/v1/unload_lora_adapter", "{\"lora_name\":\"sql\"}");
    assertThat(unloaded.statusCode()).isEqualTo(200);
    assertThat(unloaded.body()).isEqualTo("Success: LoRA adapter 'sql' removed successfully.");
    parents.remove("sql");
    assertThat(models(roots)).containsExactlyEntriesOf(parents);
  }

  @Test
  void loadAndUnloadErrorsAreVllms() throws Exception {
    HttpResponse<String> twice =
        post("/v1/load_lora_adapter", "{\"lora_name\":\"sql\",\"lora_path\":\"/elsewhere\"}");
    assertThat(twice.statusCode()).isEqualTo(400);
    JsonNode error = JSON.readTree(twice.body()).get("error");
    assertThat(error.get("type").asText()).isEqualTo("InvalidUserInput");
    assertThat(error.get("message").asText())
        .isEqualTo("The lora adapter 'sql' has already been loaded.");

    HttpResponse<String> noPath = post("/v1/load_lora_adapter", "{\"lora_name\":\"x\"}");
    assertThat(noPath.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(noPath.body()).at("/error/message").asText())
        .isEqualTo("Both 'lora_name' and 'lora_path' must be provided.");

    HttpResponse<String> unknown = post("/v1/unload_lora_adapter", "{\"lora_name\":\"nope\"}");
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(unknown.body()).at("/error/type").asText()).isEqualTo("NotFoundError");
    assertThat(JSON.readTree(unknown.body()).at("/error/message").asText())
        .isEqualTo("The lora adapter 'nope' cannot be found.");
  }

  @Test
  void aRequestForAnUnknownOrUnloadedModelIs404() throws Exception {
    String body = "{\"model\":\"nope\",\"prompt\":\"hello\",\"max_tokens\":1}";
    HttpResponse<String> r = post("/v1/completions", body);
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(r.body()).at("/error/message").asText())
        .isEqualTo("The model `nope` does not exist.");

    assertThat(post("/v1/unload_lora_adapter", "{\"lora_name\":\"sql\"}").statusCode())
        .isEqualTo(200);
    HttpResponse<String> gone =
        post("/v1/completions", "{\"model\":\"sql\",\"prompt\":\"hello\",\"max_tokens\":1}");
    assertThat(gone.statusCode()).isEqualTo(404);
  }

  @Test
  void anAdapterRequestIsKeyedWithTheAdapterAndSharesNoBlockWithTheBase() throws Exception {
    String prompt = "x".repeat(16 * 6 + 3); // six whole blocks of the byte tokenizer
    HttpResponse<String> r =
        post(
            "/v1/completions",
            "{\"model\":\"sql\",\"prompt\":\"" + prompt + "\",\"max_tokens\":1}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(JSON.readTree(r.body()).get("model").asText()).isEqualTo("sql");
    int[] tokens = SimTokenizer.BYTES.encodePrompt(prompt);
    long[] sql = hashes(tokens, "sql");
    long[] base = hashes(tokens, null);
    assertThat(set(engine.cachedBlockHashes()))
        .containsAll(set(sql))
        .doesNotContainAnyElementsOf(set(base));

    // The same prompt for the base model finds none of the adapter's blocks cached...
    HttpResponse<String> plain =
        post(
            "/v1/completions",
            "{\"model\":\"base\",\"prompt\":\"" + prompt + "\",\"max_tokens\":1}");
    assertThat(
            JSON.readTree(plain.body()).at("/usage/prompt_tokens_details/cached_tokens").asInt(0))
        .isZero();
    // ...and the adapter again finds its own.
    HttpResponse<String> again =
        post(
            "/v1/completions",
            "{\"model\":\"sql\",\"prompt\":\"" + prompt + "\",\"max_tokens\":1}");
    assertThat(JSON.readTree(again.body()).at("/usage/prompt_tokens_details/cached_tokens").asInt())
        .isEqualTo(16 * 6);
  }

  private long[] hashes(int[] tokens, String lora) throws Exception {
    return engine.engine().query(c -> c.blockHashes(tokens, lora, null)).get(10, TimeUnit.SECONDS);
  }

  private static Set<Long> set(long[] a) {
    List<Long> l = new ArrayList<>();
    for (long v : a) {
      l.add(v);
    }
    return new HashSet<>(l);
  }

  @Test
  void withoutRuntimeLoraUpdating_loadingIs404AndItsRoutesAreNotListed_asVllmAnswers()
      throws Exception {
    try (SimEngine plain =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("base")
                .withEndpoints(0, null, null)
                .withEngine(SimEngineConfig.defaults().withNumBlocks(64)))) {
      HttpResponse<String> load =
          LoopbackHttp.post(
              plain.baseUrl() + "/v1/load_lora_adapter",
              "{\"lora_name\":\"x\",\"lora_path\":\"/adapters/x\"}");
      assertThat(load.statusCode()).isEqualTo(404);
      assertThat(
              LoopbackHttp.post(
                      plain.baseUrl() + "/v1/unload_lora_adapter", "{\"lora_name\":\"x\"}")
                  .statusCode())
          .isEqualTo(404);
      assertThat(
              LoopbackHttp.getJson(plain.baseUrl() + "/openapi.json")
                  .get("paths")
                  .has("/v1/load_lora_adapter"))
          .isFalse();
    }
    assertThat(
            LoopbackHttp.getJson(engine.baseUrl() + "/openapi.json")
                .get("paths")
                .has("/v1/load_lora_adapter"))
        .isTrue();
  }

  @Test
  void theVariableIsReadAsVllmReadsIt() {
    assertThat(SimApis.runtimeLoraAllowed("True")).isTrue();
    assertThat(SimApis.runtimeLoraAllowed(" 1 ")).isTrue();
    assertThat(SimApis.runtimeLoraAllowed("yes")).isFalse();
    assertThat(SimApis.runtimeLoraAllowed("0")).isFalse();
    assertThat(SimApis.runtimeLoraAllowed(null)).isFalse();
  }
}
