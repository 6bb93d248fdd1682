package io.kvrouter.protocol.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.protocol.EngineIdentity;
import org.junit.jupiter.api.Test;

/** The per-model speculative-decoding setting and the cache hit it predicts, as vLLM reuses. */
class SpeculativeDecodingTest {

  @Test
  void withoutSpeculativeDecoding_theHitIsTheMatchLessThePromptsLastToken() {
    SpeculativeDecoding none = SpeculativeDecoding.NONE;
    assertThat(none.reusableBlocks(6, 100, 16)).isEqualTo(6);
    assertThat(none.reusableBlocks(6, 96, 16)).as("96 tokens: at most 95 reused").isEqualTo(5);
    assertThat(none.reusableBlocks(0, 100, 16)).isZero();
  }

  @Test
  void eagleStyleMethods_dropTheLastMatchedBlock_afterThePromptCap() {
    for (String m : new String[] {"eagle", "EAGLE3", "mtp", "deepseek_mtp", "dflash", "dspark"}) {
      SpeculativeDecoding s = SpeculativeDecoding.of(m);
      assertThat(s.dropsLastBlock()).as(m).isTrue();
      assertThat(s.reusableBlocks(6, 100, 16)).as(m).isEqualTo(5);
      assertThat(s.reusableBlocks(6, 96, 16)).as(m + ", 96 tokens").isEqualTo(4);
      assertThat(s.reusableBlocks(0, 100, 16)).as(m + ", nothing held").isZero();
    }
    for (String m : new String[] {"ngram", "draft_model", "medusa", "suffix", ""}) {
      assertThat(SpeculativeDecoding.of(m).dropsLastBlock()).as(m).isFalse();
    }
  }

  @Test
  void theSettingIsReadPerModel_andABadValueNamesItsKey() {
    var config =
        ConfigFactory.parseString(
            "kvrouter.models { \"org/Model-1\" { speculative-method = eagle3 }, other { } }");
    assertThat(SpeculativeDecoding.forModel(config, "org/Model-1").method()).isEqualTo("eagle3");
    assertThat(SpeculativeDecoding.forModel(config, "other")).isEqualTo(SpeculativeDecoding.NONE);
    assertThat(SpeculativeDecoding.forModel(config, "absent")).isEqualTo(SpeculativeDecoding.NONE);

    var bad = ConfigFactory.parseString("kvrouter.models.m.speculative-method = eagel");
    assertThatThrownBy(() -> SpeculativeDecoding.forModel(bad, "m"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kvrouter.models.\"m\".speculative-method")
        .hasMessageContaining("eagel");
  }

  @Test
  void anIdentityCarriesTheMethod_andAnUnknownOneCostsNoHit() {
    EngineIdentity plain = new EngineIdentity("vllm", "0.11.0", "sha256", 16);
    assertThat(plain.speculative()).isEqualTo(EngineIdentity.NONE);
    EngineIdentity eagle = plain.withSpeculative(SpeculativeDecoding.of("eagle"));
    assertThat(eagle.speculativeDecoding().dropsLastBlock()).isTrue();
    assertThat(eagle.withBlockSize(32).speculative())
        .as("kept by withBlockSize")
        .isEqualTo("eagle");
    EngineIdentity newer = new EngineIdentity("vllm", "9", "sha256", 16, "some_future_method");
    assertThat(newer.speculativeDecoding()).isEqualTo(SpeculativeDecoding.NONE);
  }
}
