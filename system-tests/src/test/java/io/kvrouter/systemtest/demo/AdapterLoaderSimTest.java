package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.ingress.routing.AdapterLoader;
import io.kvrouter.sim.SimApis;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.testing.LoopbackHttp;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The ingress's {@link AdapterLoader} against real simulated engines, which answer as vLLM does: it
 * reads the adapter's path from the engine that has it and loads it on one that lacks it; a second
 * load of the same adapter there ("already been loaded") counts as loaded; an adapter no holder
 * lists fails; an engine that does not load adapters at run time (vLLM's default) fails with the
 * variable to set.
 */
class AdapterLoaderSimTest {

  private static SimEngine engine(Map<String, String> adapters) throws Exception {
    return engine(adapters, true);
  }

  /** An engine as vLLM runs with or without {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=True}. */
  private static SimEngine engine(Map<String, String> adapters, boolean runtimeLora)
      throws Exception {
    return SimEngine.start(
        SimEngineSettings.loopback()
            .withModel("base")
            .withEndpoints(0, null, null)
            .withApis(SimApis.vllm().withRuntimeLora(runtimeLora))
            .withLoraModules(adapters));
  }

  @Test
  void loadsTheAdapterWithTheHoldersPath_twiceIsStillLoaded_andAnUnlistedOneFails()
      throws Exception {
    try (SimEngine holder = engine(Map.of("sql", "/adapters/sql"));
        SimEngine other = engine(Map.of())) {
      AdapterLoader loader = new AdapterLoader(Duration.ofSeconds(5));
      List<String> holders = List.of(holder.baseUrl());
      loader.load(other.baseUrl(), "sql", holders).toCompletableFuture().get(10, TimeUnit.SECONDS);

      JsonNode models = LoopbackHttp.getJson(other.baseUrl() + "/v1/models");
      JsonNode card = null;
      for (JsonNode m : models.path("data")) {
        if (m.path("id").asText().equals("sql")) {
          card = m;
        }
      }
      assertThat(card).as("the engine lists the adapter it was asked to load").isNotNull();
      assertThat(card.path("root").asText()).isEqualTo("/adapters/sql");
      assertThat(card.path("parent").asText()).isEqualTo("base");

      loader.load(other.baseUrl(), "sql", holders).toCompletableFuture().get(10, TimeUnit.SECONDS);

      assertThatThrownBy(
              () ->
                  loader
                      .load(other.baseUrl(), "chat", holders)
                      .toCompletableFuture()
                      .get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasMessageContaining("no engine lists the path of LoRA adapter 'chat'");
    }
  }

  @Test
  void anEngineWithoutRuntimeLoading_failsTheLoadNamingTheVariableToSet() throws Exception {
    try (SimEngine holder = engine(Map.of("sql", "/adapters/sql"));
        SimEngine plain = engine(Map.of(), false)) {
      AdapterLoader loader = new AdapterLoader(Duration.ofSeconds(5));
      assertThatThrownBy(
              () ->
                  loader
                      .load(plain.baseUrl(), "sql", List.of(holder.baseUrl()))
                      .toCompletableFuture()
                      .get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasMessageContaining("VLLM_ALLOW_RUNTIME_LORA_UPDATING=True");
    }
  }
}
