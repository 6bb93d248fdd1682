package io.kvrouter.ingress.tokenize;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import io.kvrouter.protocol.keys.MediaPrompt;

/**
 * One entry of {@code kvrouter.models} in HOCON, read once at start-up:
 *
 * <pre>
 * kvrouter.models {
 *   "Qwen/Qwen3-0.6B" {
 *     tokenizer = "hf:/models/qwen3/tokenizer.json"       # or "tiktoken:o200k_base" / "tiktoken:cl100k_base"
 *     chat-template = "/models/qwen3/tokenizer_config.json" # or a .jinja file, or "chatml" (default)
 *     block-size = 16                                       # default 16; must equal the engine's
 *     max-model-len = 32768                                 # default 32768
 *     images {                  # how the engine expands an image in a chat (see MediaPrompt)
 *       tokens = 256            # placeholder tokens per image; must equal the engine's
 *       token-id = 151655       # their token id (the model's image token)
 *       engine-model-id = "..." # the engine's --model, which vLLM hashes images under
 *     }                         # (default: the model name)
 *   }
 * }
 * </pre>
 *
 * Relative paths resolve against the working directory.
 *
 * @param name the model name clients send in {@code "model"}
 * @param tokenizer the tokenizer spec, {@code hf:<path>} or {@code tiktoken:<encoding>}
 * @param chatTemplate {@code chatml}, a {@code tokenizer_config.json} path or a {@code .jinja} path
 * @param blockSize tokens per KV block, positive
 * @param maxModelLen the longest prompt plus completion the model accepts, positive
 * @param images how the model's engine expands and names images ({@link
 *     MediaPrompt.Settings#DEFAULTS} when the block sets none)
 */
public record ModelSettings(
    String name,
    String tokenizer,
    String chatTemplate,
    int blockSize,
    int maxModelLen,
    MediaPrompt.Settings images) {

  /** The chat-template value that selects {@link ChatMlTemplate}. */
  public static final String CHATML = "chatml";

  /** The block size used when a model sets none. */
  public static final int DEFAULT_BLOCK_SIZE = 16;

  /** The context length used when a model sets none. */
  public static final int DEFAULT_MAX_MODEL_LEN = 32768;

  /** Settings whose images expand as {@link MediaPrompt.Settings#DEFAULTS} says. */
  public ModelSettings(
      String name, String tokenizer, String chatTemplate, int blockSize, int maxModelLen) {
    this(name, tokenizer, chatTemplate, blockSize, maxModelLen, MediaPrompt.Settings.DEFAULTS);
  }

  /**
   * Validates the settings.
   *
   * @throws TokenizerConfigException naming the model and the bad value
   */
  public ModelSettings {
    images = images == null ? MediaPrompt.Settings.DEFAULTS : images;
    if (name == null || name.isBlank()) {
      throw new TokenizerConfigException("model name must not be blank");
    }
    if (tokenizer == null || tokenizer.isBlank()) {
      throw new TokenizerConfigException("model '" + name + "': tokenizer is required");
    }
    if (chatTemplate == null || chatTemplate.isBlank()) {
      throw new TokenizerConfigException("model '" + name + "': chat-template must not be blank");
    }
    if (blockSize <= 0) {
      throw new TokenizerConfigException(
          "model '" + name + "': block-size must be positive, got " + blockSize);
    }
    if (maxModelLen <= 0) {
      throw new TokenizerConfigException(
          "model '" + name + "': max-model-len must be positive, got " + maxModelLen);
    }
  }

  /**
   * Reads one model's block.
   *
   * @param name the model's key under {@code kvrouter.models}
   * @param block that key's object
   * @throws TokenizerConfigException if a key is missing or has the wrong type
   */
  public static ModelSettings fromConfig(String name, Config block) {
    try {
      return new ModelSettings(
          name,
          block.hasPath("tokenizer") ? block.getString("tokenizer") : null,
          block.hasPath("chat-template") ? block.getString("chat-template") : CHATML,
          block.hasPath("block-size") ? block.getInt("block-size") : DEFAULT_BLOCK_SIZE,
          block.hasPath("max-model-len") ? block.getInt("max-model-len") : DEFAULT_MAX_MODEL_LEN,
          images(block));
    } catch (ConfigException | IllegalArgumentException e) {
      throw new TokenizerConfigException("model '" + name + "': " + e.getMessage(), e);
    }
  }

  private static MediaPrompt.Settings images(Config block) {
    MediaPrompt.Settings d = MediaPrompt.Settings.DEFAULTS;
    if (!block.hasPath("images")) {
      return d;
    }
    Config c = block.getConfig("images");
    return new MediaPrompt.Settings(
        c.hasPath("tokens") ? c.getInt("tokens") : d.imageTokens(),
        c.hasPath("token-id") ? c.getInt("token-id") : d.imageTokenId(),
        c.hasPath("engine-model-id") ? c.getString("engine-model-id") : null);
  }
}
