package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenizerRegistryTest {

  private static final List<Map<String, Object>> HELLO =
      List.of(Map.of("role", "user", "content", "Hello"));

  @TempDir Path tmp;

  private static Config models(String hocon) {
    return ConfigFactory.parseString(hocon)
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  private static String q(Object pathOrSpec) {
    return "\"" + pathOrSpec.toString().replace("\\", "\\\\") + "\"";
  }

  @Test
  void referenceConf_definesTheDemoModel_withNoFiles() {
    try (TokenizerRegistry registry = TokenizerRegistry.fromConfig(ConfigFactory.load())) {
      ModelTokenizer demo = registry.get(TokenizerRegistry.DEMO_MODEL);

      assertThat(demo.tokenizer().description()).isEqualTo("tiktoken:o200k_base");
      assertThat(demo.chatTemplate()).isSameAs(ChatMlTemplate.INSTANCE);
      assertThat(demo.blockSize()).isEqualTo(16);
      assertThat(demo.maxModelLen()).isEqualTo(32768);
      String rendered = demo.renderChat(HELLO, null, true, Map.of());
      assertThat(rendered).isEqualTo("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
      assertThat(demo.encodeChat(HELLO, null, true, Map.of()))
          .containsExactly(demo.tokenizer().encode(rendered, false));
    }
  }

  @Test
  void hfModel_fromHocon_withQuotedNameAndDefaults() {
    Config config =
        models(
            "kvrouter.models { \"Qwen/Qwen3-0.6B\" { tokenizer = "
                + q("hf:" + Qwen3Files.tokenizerJson())
                + ", chat-template = "
                + q(Qwen3Files.tokenizerConfig())
                + " } }");

    try (TokenizerRegistry registry = TokenizerRegistry.fromConfig(config)) {
      ModelTokenizer qwen = registry.get("Qwen/Qwen3-0.6B");

      assertThat(registry.modelNames()).containsExactly("Qwen/Qwen3-0.6B", "kvrouter-demo");
      assertThat(qwen.blockSize()).isEqualTo(ModelSettings.DEFAULT_BLOCK_SIZE);
      assertThat(qwen.maxModelLen()).isEqualTo(ModelSettings.DEFAULT_MAX_MODEL_LEN);
      // Qwen3's vocabulary has <|im_start|> as one special token (151644), tiktoken does not.
      assertThat(qwen.encodeChat(HELLO, null, true, Map.of()))
          .startsWith(151644, 872, 198)
          .endsWith(151644, 77091, 198);
    }
  }

  @Test
  void jinjaFileTemplate_takesSpecialTokensFromSiblingConfig() throws IOException {
    Files.writeString(
        tmp.resolve("chat_template.jinja"), "{{ eos_token }}{{ messages[0].content }}");
    Files.copy(Qwen3Files.tokenizerConfig(), tmp.resolve("tokenizer_config.json"));

    ModelTokenizer m =
        TokenizerRegistry.load(
            new ModelSettings(
                "m",
                "tiktoken:cl100k_base",
                tmp.resolve("chat_template.jinja").toString(),
                16,
                1024));

    assertThat(m.renderChat(HELLO, null, false, Map.of())).isEqualTo("<|im_end|>Hello");
  }

  @Test
  void unknownModel_namesTheConfiguredOnes() {
    try (TokenizerRegistry registry = TokenizerRegistry.fromConfig(ConfigFactory.load())) {
      assertThatThrownBy(() -> registry.get("gpt-17"))
          .isInstanceOf(TokenizerConfigException.class)
          .hasMessageContaining("unknown model 'gpt-17'")
          .hasMessageContaining("kvrouter-demo");
      assertThat(registry.find("gpt-17")).isEmpty();
    }
  }

  @Test
  void missingTokenizerFile_failsAtStartup_namingModelAndFile() {
    Path missing = tmp.resolve("nope/tokenizer.json");
    Config config = models("kvrouter.models { broken { tokenizer = " + q("hf:" + missing) + " } }");

    assertThatThrownBy(() -> TokenizerRegistry.fromConfig(config))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("model 'broken'")
        .hasMessageContaining(missing.toString());
  }

  @Test
  void brokenTokenizerFile_failsAtStartup() throws IOException {
    Path bad = tmp.resolve("tokenizer.json");
    Files.writeString(bad, "{\"not\": \"a tokenizer\"");

    assertThatThrownBy(
            () -> TokenizerRegistry.load(new ModelSettings("bad", "hf:" + bad, "chatml", 16, 1024)))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("model 'bad'")
        .hasMessageContaining("cannot load tokenizer");
  }

  @Test
  void missingOrTemplatelessOrBrokenChatTemplate_failsAtStartup() throws IOException {
    Path noTemplate = tmp.resolve("tokenizer_config.json");
    Files.writeString(noTemplate, "{\"eos_token\": \"</s>\"}");
    Path broken = tmp.resolve("broken.jinja");
    Files.writeString(broken, "{% for m in messages %}{{ m.content ");

    assertThatThrownBy(
            () ->
                TokenizerRegistry.load(
                    new ModelSettings(
                        "a",
                        "tiktoken:o200k_base",
                        tmp.resolve("absent.json").toString(),
                        16,
                        1024)))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("not found");
    assertThatThrownBy(
            () ->
                TokenizerRegistry.load(
                    new ModelSettings("b", "tiktoken:o200k_base", noTemplate.toString(), 16, 1024)))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("no chat_template");
    assertThatThrownBy(
            () ->
                TokenizerRegistry.load(
                    new ModelSettings("c", "tiktoken:o200k_base", broken.toString(), 16, 1024)))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("broken chat template");
  }

  @Test
  void badValues_areRejectedWithTheKeyAndModel() {
    assertThatThrownBy(
            () ->
                TokenizerRegistry.fromConfig(
                    models("kvrouter.models { m { tokenizer = \"sentencepiece:x\" } }")))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("'hf:<path");
    assertThatThrownBy(
            () ->
                TokenizerRegistry.fromConfig(
                    models(
                        "kvrouter.models { m { tokenizer = \"tiktoken:o200k_base\", block-size = 0 } }")))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("model 'm': block-size must be positive");
    assertThatThrownBy(
            () ->
                TokenizerRegistry.fromConfig(
                    models("kvrouter.models { m { chat-template = chatml } }")))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("model 'm': tokenizer is required");
    assertThatThrownBy(
            () ->
                TokenizerRegistry.fromConfig(
                    models(
                        "kvrouter.models { m { tokenizer = \"tiktoken:o200k_base\", max-model-len = lots } }")))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("model 'm'")
        .hasMessageContaining("max-model-len");
    assertThatThrownBy(() -> TokenizerRegistry.fromConfig(models("kvrouter.models { m = 3 }")))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("must be an object");
  }

  @Test
  void imageSettings_comePerModel_withDefaultsForWhatIsNotSet() {
    try (TokenizerRegistry registry =
        TokenizerRegistry.fromConfig(
            models(
                "kvrouter.models { m { tokenizer = \"tiktoken:o200k_base\", images { tokens = 64,"
                    + " engine-model-id = \"org/m-7b\" } }, n { tokenizer = \"tiktoken:o200k_base\" } }"))) {
      MediaPrompt.Settings m = registry.get("m").images();
      assertThat(m.imageTokens()).isEqualTo(64);
      assertThat(m.imageTokenId()).isEqualTo(MediaPrompt.Settings.DEFAULTS.imageTokenId());
      assertThat(m.modelId("m")).isEqualTo("org/m-7b");
      assertThat(registry.get("n").images()).isEqualTo(MediaPrompt.Settings.DEFAULTS);
      assertThat(registry.get("n").images().modelId("n")).isEqualTo("n");
    }
    assertThatThrownBy(
            () ->
                TokenizerRegistry.fromConfig(
                    models(
                        "kvrouter.models { m { tokenizer = \"tiktoken:o200k_base\", images.tokens = 0 } }")))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("model 'm'")
        .hasMessageContaining("imageTokens");
  }

  @Test
  void missingModelsSection_isAConfigError() {
    assertThatThrownBy(() -> TokenizerRegistry.fromConfig(ConfigFactory.empty()))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("kvrouter.models");
  }
}
