package io.kvrouter.ingress.tokenize;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parts of a Hugging Face {@code tokenizer_config.json} a chat template needs: the template
 * source and the special tokens transformers passes to it as variables.
 *
 * <p>{@code chat_template} may be a string or a list of {@code {name, template}} (transformers'
 * named templates), of which the one named {@code default} is used. Special tokens ({@code
 * bos_token}, {@code eos_token}, {@code unk_token}, {@code pad_token}) may be strings or {@code
 * {"content": ...}} objects; {@code additional_special_tokens} becomes a list of strings. A
 * template in a separate file ({@code chat_template.jinja} next to the config, as newer
 * transformers writes it) is read by {@link #template(Path)} instead.
 *
 * @param chatTemplate the Jinja source, or {@code null} if the file has none
 * @param specialTokens template variables for the special tokens, in file order
 */
record HfTokenizerConfig(String chatTemplate, Map<String, Object> specialTokens) {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> TOKEN_KEYS =
      List.of("bos_token", "eos_token", "unk_token", "pad_token");

  /**
   * Reads a {@code tokenizer_config.json}.
   *
   * @throws TokenizerConfigException if the file is missing or not valid JSON
   */
  static HfTokenizerConfig read(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new TokenizerConfigException("tokenizer config not found: " + file);
    }
    JsonNode root;
    try {
      root = JSON.readTree(file.toFile());
    } catch (IOException e) {
      throw new TokenizerConfigException(
          "cannot read tokenizer config " + file + ": " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new TokenizerConfigException("tokenizer config " + file + " is not a JSON object");
    }
    Map<String, Object> tokens = new LinkedHashMap<>();
    for (String key : TOKEN_KEYS) {
      String value = tokenText(root.get(key));
      if (value != null) {
        tokens.put(key, value);
      }
    }
    JsonNode extra = root.get("additional_special_tokens");
    if (extra != null && extra.isArray()) {
      List<String> list = new ArrayList<>();
      extra.forEach(
          t -> {
            String s = tokenText(t);
            if (s != null) {
              list.add(s);
            }
          });
      tokens.put("additional_special_tokens", List.copyOf(list));
    }
    return new HfTokenizerConfig(template(root.get("chat_template")), Map.copyOf(tokens));
  }

  /**
   * Reads a bare template file ({@code .jinja}); special tokens come from a {@code
   * tokenizer_config.json} in the same directory if there is one.
   *
   * @throws TokenizerConfigException if the file is missing or unreadable
   */
  static HfTokenizerConfig template(Path jinjaFile) {
    if (!Files.isRegularFile(jinjaFile)) {
      throw new TokenizerConfigException("chat template not found: " + jinjaFile);
    }
    Map<String, Object> tokens = Map.of();
    Path sibling = jinjaFile.resolveSibling("tokenizer_config.json");
    if (Files.isRegularFile(sibling)) {
      tokens = read(sibling).specialTokens();
    }
    try {
      return new HfTokenizerConfig(Files.readString(jinjaFile), tokens);
    } catch (IOException e) {
      throw new TokenizerConfigException(
          "cannot read chat template " + jinjaFile + ": " + e.getMessage(), e);
    }
  }

  private static String template(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (node.isTextual()) {
      return node.asText();
    }
    if (node.isArray()) {
      for (JsonNode named : node) {
        if ("default".equals(named.path("name").asText())) {
          return named.path("template").asText(null);
        }
      }
    }
    return null;
  }

  private static String tokenText(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (node.isTextual()) {
      return node.asText();
    }
    JsonNode content = node.get("content");
    return content != null && content.isTextual() ? content.asText() : null;
  }
}
