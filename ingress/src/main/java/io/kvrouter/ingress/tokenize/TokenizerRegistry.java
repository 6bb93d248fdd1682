package io.kvrouter.ingress.tokenize;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The tokenizer and chat template of every model this ingress serves, built once at start-up from
 * {@code kvrouter.models} (see {@link ModelSettings} for the keys; {@code reference.conf} defines
 * the file-less demo model {@value #DEMO_MODEL}).
 *
 * <p>Every model is loaded eagerly, so a missing or broken file stops the node at start-up with a
 * {@link TokenizerConfigException} naming the model and file, not at the first request.
 *
 * <p>Thread-safe after construction: lookups read an immutable map. Cost: loading takes about a
 * second per Hugging Face tokenizer; {@link #get} is one hash lookup. {@link #close()} frees the
 * native tokenizers.
 */
public final class TokenizerRegistry implements AutoCloseable {

  /** The model defined by {@code reference.conf}: o200k_base and ChatML, no files needed. */
  public static final String DEMO_MODEL = "kvrouter-demo";

  /** The HOCON path of the model table. */
  public static final String CONFIG_PATH = "kvrouter.models";

  static {
    DjlOffline.ensure();
  }

  private final Map<String, ModelTokenizer> models;

  private TokenizerRegistry(Map<String, ModelTokenizer> models) {
    this.models = Collections.unmodifiableMap(new LinkedHashMap<>(models));
  }

  /**
   * Builds the registry from {@code kvrouter.models}. Models are loaded and listed in name order
   * (HOCON objects keep no order).
   *
   * @param config the node's configuration (typically {@code ConfigFactory.load()})
   * @throws TokenizerConfigException if the section is missing or any model cannot be loaded
   */
  public static TokenizerRegistry fromConfig(Config config) {
    ConfigObject table;
    try {
      table = config.getObject(CONFIG_PATH);
    } catch (ConfigException e) {
      throw new TokenizerConfigException(CONFIG_PATH + ": " + e.getMessage(), e);
    }
    List<ModelSettings> settings = new ArrayList<>();
    for (Map.Entry<String, ConfigValue> e : table.entrySet()) {
      if (e.getValue().valueType() != ConfigValueType.OBJECT) {
        throw new TokenizerConfigException(
            CONFIG_PATH
                + ".\""
                + e.getKey()
                + "\" must be an object, got "
                + e.getValue().valueType());
      }
      settings.add(ModelSettings.fromConfig(e.getKey(), ((ConfigObject) e.getValue()).toConfig()));
    }
    settings.sort(Comparator.comparing(ModelSettings::name));
    return fromSettings(settings);
  }

  /**
   * Builds the registry from settings already read.
   *
   * @throws TokenizerConfigException if any model cannot be loaded; models loaded before it are
   *     closed
   */
  public static TokenizerRegistry fromSettings(List<ModelSettings> settings) {
    Map<String, ModelTokenizer> loaded = new LinkedHashMap<>();
    try {
      for (ModelSettings s : settings) {
        loaded.put(s.name(), load(s));
      }
    } catch (RuntimeException e) {
      new TokenizerRegistry(loaded).close();
      throw e;
    }
    return new TokenizerRegistry(loaded);
  }

  /** Loads one model's tokenizer and template. */
  static ModelTokenizer load(ModelSettings s) {
    PromptTokenizer tokenizer = tokenizer(s);
    try {
      return new ModelTokenizer(
          s.name(), tokenizer, template(s), s.blockSize(), s.maxModelLen(), s.images());
    } catch (RuntimeException e) {
      if (tokenizer instanceof AutoCloseable) {
        closeQuietly(tokenizer);
      }
      throw e;
    }
  }

  private static PromptTokenizer tokenizer(ModelSettings s) {
    String spec = s.tokenizer().trim();
    int colon = spec.indexOf(':');
    String scheme = colon < 0 ? "" : spec.substring(0, colon).toLowerCase(Locale.ROOT);
    String rest = colon < 0 ? "" : spec.substring(colon + 1).trim();
    try {
      switch (scheme) {
        case "hf":
          return HfPromptTokenizer.load(Path.of(rest));
        case "tiktoken":
          return TiktokenPromptTokenizer.forEncoding(rest);
        default:
          throw new TokenizerConfigException(
              "tokenizer must be 'hf:<path to tokenizer.json>' or "
                  + "'tiktoken:<encoding>', got '"
                  + spec
                  + "'");
      }
    } catch (TokenizerConfigException e) {
      throw new TokenizerConfigException("model '" + s.name() + "': " + e.getMessage(), e);
    }
  }

  private static ChatTemplate template(ModelSettings s) {
    String spec = s.chatTemplate().trim();
    if (spec.equalsIgnoreCase(ModelSettings.CHATML)) {
      return ChatMlTemplate.INSTANCE;
    }
    try {
      Path path = Path.of(spec);
      String file = path.getFileName() == null ? "" : path.getFileName().toString();
      HfTokenizerConfig hf =
          file.endsWith(".jinja") || file.endsWith(".j2")
              ? HfTokenizerConfig.template(path)
              : HfTokenizerConfig.read(path);
      if (hf.chatTemplate() == null) {
        throw new TokenizerConfigException(
            path
                + " has no chat_template; set chat-template = "
                + ModelSettings.CHATML
                + " to use ChatML");
      }
      return new JinjaChatTemplate(hf.chatTemplate(), hf.specialTokens());
    } catch (TokenizerConfigException e) {
      throw new TokenizerConfigException("model '" + s.name() + "': " + e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new TokenizerConfigException(
          "model '" + s.name() + "': broken chat template " + spec + ": " + e.getMessage(), e);
    }
  }

  /**
   * Returns a model's tokenizer.
   *
   * @throws TokenizerConfigException if the model is not configured; the message lists the
   *     configured models
   */
  public ModelTokenizer get(String model) {
    ModelTokenizer m = models.get(model);
    if (m == null) {
      throw new TokenizerConfigException(
          "unknown model '" + model + "'; configured: " + String.join(", ", models.keySet()));
    }
    return m;
  }

  /** Returns a model's tokenizer, or empty if the model is not configured. */
  public Optional<ModelTokenizer> find(String model) {
    return Optional.ofNullable(models.get(model));
  }

  /** The configured model names, in the order they were loaded. */
  public Set<String> modelNames() {
    return models.keySet();
  }

  /** Frees native tokenizers. The registry must not be used afterwards. */
  @Override
  public void close() {
    for (ModelTokenizer m : models.values()) {
      closeQuietly(m.tokenizer());
    }
  }

  private static void closeQuietly(PromptTokenizer tokenizer) {
    if (tokenizer instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception ignored) {
        // Freeing native memory at shutdown; nothing useful to do on failure.
      }
    }
  }
}
