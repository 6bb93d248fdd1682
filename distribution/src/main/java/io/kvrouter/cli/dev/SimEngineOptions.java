package io.kvrouter.cli.dev;

import io.kvrouter.protocol.keys.MediaPrompt;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimApis;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimKvTransfer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The shape and speed of a simulated engine, the same options wherever a command starts some
 * ({@code sim-engine}, {@code agent --sim}, {@code demo}); defaults are {@link
 * SimEngineConfig#defaults()}'s.
 */
final class SimEngineOptions {

  private static final SimEngineConfig DEFAULTS = SimEngineConfig.defaults();

  @Option(
      names = "--num-blocks",
      description =
          "KV cache capacity of a simulated engine, in blocks (default: ${DEFAULT-VALUE}).")
  int numBlocks = DEFAULTS.numBlocks();

  @Option(
      names = "--max-num-seqs",
      description = "Running requests of a simulated engine at most (default: ${DEFAULT-VALUE}).")
  int maxNumSeqs = DEFAULTS.maxNumSeqs();

  @Option(
      names = "--max-num-batched-tokens",
      description =
          "Tokens per scheduler pass of a simulated engine at most (default: ${DEFAULT-VALUE}).")
  int maxNumBatchedTokens = DEFAULTS.maxNumBatchedTokens();

  @Option(
      names = "--speedup",
      description =
          "Divides every pass time of the Dynamo mocker timing model (default: ${DEFAULT-VALUE}).")
  double speedup = 1.0;

  @Option(
      names = "--hash-seed",
      description =
          "PYTHONHASHSEED-like seed of the engine's sha256_cbor block hashes (default: ${DEFAULT-VALUE}).")
  String hashSeed = DEFAULTS.hashSeed();

  @Option(
      names = "--sliding-window",
      paramLabel = "TOKENS",
      description =
          "Runs a hybrid model: a sliding-window cache group of this many tokens beside the"
              + " full-attention group (default: 0, none).")
  int slidingWindow;

  @Option(
      names = "--speculative-method",
      paramLabel = "METHOD",
      description =
          "Runs speculative decoding as vLLM's --speculative-config method does for the prefix"
              + " cache: eagle, eagle3, mtp, dflash or dspark recompute the last matched block of"
              + " every cache hit (default: ${DEFAULT-VALUE}).")
  String speculativeMethod = "none";

  private static final SimKvTransfer TRANSFER = SimKvTransfer.defaults();

  @Option(
      names = "--kv-bytes-per-token",
      description =
          "KV bytes per token a decode engine pulls from a prefill engine (default:"
              + " ${DEFAULT-VALUE}, Llama-3.1-8B).")
  long kvBytesPerToken = TRANSFER.bytesPerToken();

  @Option(
      names = "--transfer-bytes-per-second",
      description =
          "Bandwidth of the prefill-to-decode KV transfer (default: ${DEFAULT-VALUE}, one 200 Gb/s"
              + " NIC).")
  double transferBytesPerSecond = TRANSFER.bytesPerSecond();

  @Option(
      names = "--lora-modules",
      arity = "1..*",
      paramLabel = "NAME=PATH",
      description =
          "LoRA adapters a simulated engine serves from the start, as vLLM's --lora-modules"
              + " name=path [name=path ...] (more can be loaded at run time with POST"
              + " /v1/load_lora_adapter, given --allow-runtime-lora-updating).")
  List<String> loraModules = List.of();

  @Option(
      names = "--allow-runtime-lora-updating",
      negatable = true,
      description =
          "Serve POST /v1/load_lora_adapter and /v1/unload_lora_adapter, as vLLM does only with"
              + " VLLM_ALLOW_RUNTIME_LORA_UPDATING=True (default: that variable, as vLLM reads it;"
              + " the demo: on).")
  Boolean runtimeLora;

  /**
   * Whether the engines load adapters at run time: the option when given, else {@code
   * VLLM_ALLOW_RUNTIME_LORA_UPDATING} from the environment, else {@code otherwise}.
   */
  boolean runtimeLora(boolean otherwise) {
    if (runtimeLora != null) {
      return runtimeLora;
    }
    String env = System.getenv("VLLM_ALLOW_RUNTIME_LORA_UPDATING");
    return env == null ? otherwise : SimApis.runtimeLoraAllowed(env);
  }

  private static final MediaPrompt.Settings IMAGES = MediaPrompt.Settings.DEFAULTS;

  @Option(
      names = "--image-tokens",
      description =
          "Placeholder tokens an image in a chat request expands into (default: ${DEFAULT-VALUE},"
              + " a 224x224 vision encoder with 14-pixel patches); the router's"
              + " kvrouter.models.<model>.images.tokens must say the same.")
  int imageTokens = IMAGES.imageTokens();

  @Option(
      names = "--image-token-id",
      description =
          "Token id of an image's placeholder tokens (default: ${DEFAULT-VALUE}, Qwen2-VL's"
              + " <|image_pad|>); the router's kvrouter.models.<model>.images.token-id must say"
              + " the same.")
  int imageTokenId = IMAGES.imageTokenId();

  /** How a simulated engine expands images ({@code --image-tokens}, {@code --image-token-id}). */
  MediaPrompt.Settings images() {
    return new MediaPrompt.Settings(imageTokens, imageTokenId, null);
  }

  /**
   * The {@code --lora-modules} adapters, name to path in the given order.
   *
   * @throws IllegalArgumentException for an entry that is not {@code name=path}
   */
  Map<String, String> loraModules() {
    Map<String, String> out = new LinkedHashMap<>();
    for (String m : loraModules) {
      int eq = m.indexOf('=');
      if (eq <= 0 || eq == m.length() - 1) {
        throw new IllegalArgumentException("--lora-modules takes name=path, not '" + m + "'");
      }
      out.put(m.substring(0, eq), m.substring(eq + 1));
    }
    return out;
  }

  /** How fast a simulated decode engine receives a prefill engine's KV. */
  SimKvTransfer transfer() {
    return new SimKvTransfer(kvBytesPerToken, transferBytesPerSecond, TRANSFER.fixedMicros());
  }

  /** The engine these options describe, with the default block size. */
  SimEngineConfig config() {
    return config(DEFAULTS.blockSize());
  }

  /** The engine these options describe, with {@code blockSize}-token blocks. */
  SimEngineConfig config(int blockSize) {
    return new SimEngineConfig(
            blockSize,
            numBlocks,
            maxNumSeqs,
            maxNumBatchedTokens,
            hashSeed,
            new MockerTimingModel(speedup))
        .withSlidingWindow(slidingWindow)
        .withSpeculativeMethod(speculativeMethod);
  }
}
