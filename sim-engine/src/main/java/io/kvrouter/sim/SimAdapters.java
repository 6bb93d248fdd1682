package io.kvrouter.sim;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The LoRA adapters a simulated engine serves on top of its base model, as vLLM's {@code
 * OpenAIServingModels} keeps them (vllm-project/vllm {@code
 * vllm/entrypoints/openai/serving_models.py}): adapters given at start-up ({@code --lora-modules
 * name=path}) and adapters loaded and unloaded at run time ({@code POST /v1/load_lora_adapter},
 * {@code POST /v1/unload_lora_adapter}, which vLLM mounts when {@code
 * VLLM_ALLOW_RUNTIME_LORA_UPDATING} is set; the sim always serves them). A request whose {@code
 * model} names an adapter runs with that adapter ({@link #loraOf}): its blocks are hashed with the
 * adapter's name and its KV events carry it as {@code lora_name}.
 *
 * <p>Errors are vLLM's: a load without both fields, or of a name already loaded, is 400 {@code
 * InvalidUserInput}; an unload of a name not loaded is 404 {@code NotFoundError}; a request for a
 * model that is neither the base model nor a loaded adapter is 404 {@code NotFoundError} ("The
 * model `x` does not exist."). vLLM does not bound how many adapters are registered ({@code
 * max_loras} bounds the adapters in one batch and {@code max_cpu_loras} the adapters cached in CPU
 * memory, evicted least recently used and read from disk again when asked for), so neither does the
 * sim: an adapter costs it nothing. The adapter's path is only remembered (listed as the model
 * card's {@code root}), never read.
 *
 * <p>Thread-safe: every method synchronizes on the registry (HTTP threads share it).
 */
final class SimAdapters {

  /** A loaded adapter: its name and the path it was loaded from. */
  record Adapter(String name, String path) {}

  private final String baseModel;
  private final Map<String, String> loaded = new LinkedHashMap<>();

  /**
   * @param baseModel the served model's name (the adapters' {@code parent})
   * @param preloaded adapters loaded at start-up, name to path, in listing order
   */
  SimAdapters(String baseModel, Map<String, String> preloaded) {
    this.baseModel = baseModel;
    preloaded.forEach(this::load);
  }

  /** Loads {@code name} from {@code path}; vLLM's 400 when a field is missing or it is loaded. */
  synchronized void load(String name, String path) {
    if (name == null || name.isEmpty() || path == null || path.isEmpty()) {
      throw new SimApiError(
          400, "InvalidUserInput", "Both 'lora_name' and 'lora_path' must be provided.", null);
    }
    if (loaded.containsKey(name) || name.equals(baseModel)) {
      throw new SimApiError(
          400,
          "InvalidUserInput",
          "The lora adapter '" + name + "' has already been loaded.",
          null);
    }
    loaded.put(name, path);
  }

  /** Unloads {@code name}; vLLM's 400 when it is missing, 404 when it is not loaded. */
  synchronized void unload(String name) {
    if (name == null || name.isEmpty()) {
      throw new SimApiError(
          400,
          "InvalidUserInput",
          "either 'lora_name' and 'lora_int_id' needs to be provided.",
          null);
    }
    if (loaded.remove(name) == null) {
      throw new SimApiError(
          404, "NotFoundError", "The lora adapter '" + name + "' cannot be found.", null);
    }
  }

  /**
   * The adapter a request for {@code model} runs with: null for the base model (or no model named),
   * the adapter's name for a loaded adapter.
   *
   * @throws SimApiError vLLM's 404 when {@code model} is neither
   */
  synchronized String loraOf(String model) {
    if (model == null || model.equals(baseModel)) {
      return null;
    }
    if (loaded.containsKey(model)) {
      return model;
    }
    throw new SimApiError(
        404, "NotFoundError", "The model `" + model + "` does not exist.", "model");
  }

  /** The loaded adapters, in the order they were loaded. */
  synchronized List<Adapter> list() {
    return loaded.entrySet().stream().map(e -> new Adapter(e.getKey(), e.getValue())).toList();
  }

  /** The base model's name. */
  String baseModel() {
    return baseModel;
  }
}
