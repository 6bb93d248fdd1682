package io.kvrouter.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * Which APIs a simulated engine serves beyond OpenAI completions and chat, as vLLM's server decides
 * it: the Anthropic Messages routes and the OpenAI Responses route are mounted on full builds of
 * current releases (vllm-project/vllm {@code vllm/entrypoints/generate/api_router.py}), and stored
 * responses (needed for {@code previous_response_id}) only with {@code
 * VLLM_ENABLE_RESPONSES_API_STORE=1} ({@code vllm/entrypoints/openai/responses/serving.py}: without
 * it {@code store} is silently ignored and a previous response is never found). Adapters are loaded
 * and unloaded at run time only with {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=True}: without it
 * {@code vllm/entrypoints/serve/lora/api_router.py} does not attach {@code /v1/load_lora_adapter}
 * and {@code /v1/unload_lora_adapter}, and the server answers them 404.
 *
 * @param anthropic serve {@code POST /v1/messages} and {@code POST /v1/messages/count_tokens}
 * @param responses serve {@code POST /v1/responses}
 * @param responsesStore keep responses in memory so {@code previous_response_id} finds them
 * @param runtimeLora serve {@code POST /v1/load_lora_adapter} and {@code /v1/unload_lora_adapter}
 */
public record SimApis(
    boolean anthropic, boolean responses, boolean responsesStore, boolean runtimeLora) {

  /** As a current vLLM release serves them by default (no response store, no runtime LoRA). */
  public static SimApis vllm() {
    return new SimApis(true, true, false, false);
  }

  /** Only OpenAI completions and chat, as an older vLLM or another OpenAI-compatible engine. */
  public static SimApis chatOnly() {
    return new SimApis(false, false, false, false);
  }

  /** The same with the response store switched on or off. */
  public SimApis withResponsesStore(boolean on) {
    return new SimApis(anthropic, responses, on, runtimeLora);
  }

  /** The same with runtime adapter loading switched on or off. */
  public SimApis withRuntimeLora(boolean on) {
    return new SimApis(anthropic, responses, responsesStore, on);
  }

  /**
   * Whether {@code value} of {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING} switches runtime loading on,
   * as vLLM reads it ({@code vllm/envs.py}: "1" or "true", any case, around spaces).
   */
  public static boolean runtimeLoraAllowed(String value) {
    String v = value == null ? "" : value.strip().toLowerCase(java.util.Locale.ROOT);
    return v.equals("1") || v.equals("true");
  }

  /** The inference paths served, as the engine lists them in {@code /openapi.json}. */
  List<String> paths() {
    List<String> paths = new ArrayList<>(List.of("/v1/completions", "/v1/chat/completions"));
    if (anthropic) {
      paths.add("/v1/messages");
      paths.add("/v1/messages/count_tokens");
    }
    if (responses) {
      paths.add("/v1/responses");
    }
    if (runtimeLora) {
      paths.add("/v1/load_lora_adapter");
      paths.add("/v1/unload_lora_adapter");
    }
    return paths;
  }
}
