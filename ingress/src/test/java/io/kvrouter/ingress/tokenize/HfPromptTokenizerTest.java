package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class HfPromptTokenizerTest {

  private static HfPromptTokenizer qwen3;

  @BeforeAll
  static void load() {
    qwen3 = HfPromptTokenizer.load(Qwen3Files.tokenizerJson());
  }

  @AfterAll
  static void close() {
    qwen3.close();
  }

  @Test
  void longText_isNeverTruncated() {
    String text = "The quick brown fox jumps over the lazy dog. ".repeat(5000);

    int[] ids = qwen3.encode(text, true);

    assertThat(ids.length).isGreaterThan(40_000);
    assertThat(qwen3.decode(ids)).isEqualTo(text);
  }

  @Test
  void malformedUtf16FromAClient_encodesInsteadOfFailing() {
    assertThat(qwen3.encode("\uD800abc", true)).isNotEmpty();
    assertThat(qwen3.encode("", true)).isEmpty();
  }

  @Test
  void specialTokensInText_becomeSpecialIds_withOrWithoutAddSpecialTokens() {
    // Qwen3 adds no BOS, so both flags give the same ids; <|im_end|> is one token.
    assertThat(qwen3.encode("hi<|im_end|>", false)).containsExactly(6023, 151645);
    assertThat(qwen3.encode("hi<|im_end|>", true)).containsExactly(6023, 151645);
  }

  @Test
  void description_namesTheFile() {
    assertThat(qwen3.description()).isEqualTo("hf:" + Qwen3Files.tokenizerJson());
  }

  @Test
  void directoryInsteadOfFile_isAConfigError() {
    assertThatThrownBy(() -> HfPromptTokenizer.load(Qwen3Files.dir()))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("not found");
  }
}
