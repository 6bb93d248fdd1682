package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TiktokenPromptTokenizerTest {

  @Test
  void o200k_encodesKnownIds() {
    // Ids as OpenAI's tiktoken gives them for "Hello world".
    assertThat(TiktokenPromptTokenizer.forEncoding("o200k_base").encode("Hello world", true))
        .containsExactly(13225, 2375);
  }

  @Test
  void cl100k_encodesKnownIds() {
    assertThat(TiktokenPromptTokenizer.forEncoding("cl100k_base").encode("Hello world", true))
        .containsExactly(9906, 1917);
  }

  @Test
  void specialTokenMarkup_isEncodedAsOrdinaryText_andRoundTrips() {
    PromptTokenizer t = TiktokenPromptTokenizer.forEncoding("o200k_base");
    String text = "<|endoftext|><|im_start|>user\nGrüße 東京 🌞";

    int[] ids = t.encode(text, true);

    assertThat(ids.length).isGreaterThan(5);
    assertThat(t.decode(ids)).isEqualTo(text);
    assertThat(t.encode(text, false)).containsExactly(ids);
  }

  @Test
  void unknownEncoding_isAConfigErrorListingTheKnownOnes() {
    assertThatThrownBy(() -> TiktokenPromptTokenizer.forEncoding("p50k_nope"))
        .isInstanceOf(TokenizerConfigException.class)
        .hasMessageContaining("p50k_nope")
        .hasMessageContaining("o200k_base");
  }

  @Test
  void description_namesTheEncoding() {
    assertThat(TiktokenPromptTokenizer.forEncoding("CL100K_BASE").description())
        .isEqualTo("tiktoken:cl100k_base");
  }
}
