package io.kvrouter.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import io.kvrouter.protocol.engine.EventEncoding;
import io.kvrouter.sim.VllmEventEncoder;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fields vLLM added to its KV events for tiers, LoRA, multimodal inputs and hybrid models
 * ({@code medium}, {@code lora_name}, {@code extra_keys}, {@code group_idx}, {@code
 * kv_cache_spec_kind}, {@code kv_cache_spec_sliding_window}) decode from the bytes vLLM's msgspec
 * writes ({@link MsgspecVectors}), in both of vLLM's encodings.
 */
class VllmEventExtrasDecodeTest {

  private static final String MM = MsgspecVectors.MM;

  private final VllmEventDecoder decoder = new VllmEventDecoder();

  private EngineEventBatch decode(String which) {
    return decoder.decode(
        HexFormat.of()
            .parseHex(which.equals("map") ? MsgspecVectors.MAP : MsgspecVectors.POSITIONAL));
  }

  @ParameterizedTest
  @ValueSource(strings = {"positional", "map"})
  void offloadedLoraStoreWithImageAndSalt_decodesMediumLoraAndEveryBlocksExtraKeys(String enc) {
    EngineEventBatch b = decode(enc);
    assertThat(b.timestamp()).isEqualTo(1.5);
    assertThat(b.dpRank()).isZero();
    assertThat(b.events()).hasSize(4);
    EngineEvent.BlockStored s = (EngineEvent.BlockStored) b.events().get(0);
    assertThat(s.blockHashes()).containsExactly(-5L, 7L);
    assertThat(s.medium()).isEqualTo("CPU");
    assertThat(s.loraName()).isEqualTo("sql-lora");
    assertThat(s.group()).isZero();
    assertThat(s.groupKind()).isEqualTo("full_attention");
    assertThat(s.slidingWindowGroup()).isFalse();
    assertThat(s.extraKeys())
        .containsExactly(
            List.of(
                new EngineEvent.TextKey("sql-lora"),
                new EngineEvent.MediaKey(MM, 2),
                new EngineEvent.TextKey("tenant-a")),
            List.of(new EngineEvent.TextKey("sql-lora"), new EngineEvent.MediaKey(MM, -2)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"positional", "map"})
  void slidingWindowGroupStoreAndRemoval_carryTheirGroup(String enc) {
    EngineEventBatch b = decode(enc);
    EngineEvent.BlockStored swa = (EngineEvent.BlockStored) b.events().get(1);
    assertThat(swa.parentHash()).isEqualTo(7L);
    assertThat(swa.medium()).isNull();
    assertThat(swa.group()).isEqualTo(1);
    assertThat(swa.groupKind()).isEqualTo("sliding_window");
    assertThat(swa.slidingWindow()).isEqualTo(4096);
    assertThat(swa.slidingWindowGroup()).isTrue();
    assertThat(swa.extraKeys()).isNull();
    EngineEvent.BlockRemoved r = (EngineEvent.BlockRemoved) b.events().get(2);
    assertThat(r.blockHashes()).containsExactly(9L);
    assertThat(r.medium()).isEqualTo("GPU");
    assertThat(r.group()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"positional", "map"})
  void storeWithoutTheNewFields_readsAsTheOnlyGroupWithNoExtraKeys(String enc) {
    EngineEvent.BlockStored plain = (EngineEvent.BlockStored) decode(enc).events().get(3);
    assertThat(plain.blockHashes()).containsExactly(11L);
    assertThat(plain.tokenIds()).containsExactly(1, 2, 3, 4);
    assertThat(plain.medium()).isEqualTo("GPU");
    assertThat(plain.loraName()).isNull();
    assertThat(plain.extraKeys()).isNull();
    assertThat(plain.group()).isZero();
    assertThat(plain.groupKind()).isNull();
  }

  @ParameterizedTest
  @EnumSource(EventEncoding.class)
  void ourEncoder_writesTheNewFieldsSoThatTheDecoderReadsThemBack(EventEncoding encoding) {
    List<List<EngineEvent.ExtraKey>> extras =
        List.of(List.of(new EngineEvent.TextKey("a"), new EngineEvent.MediaKey(MM, 0)), List.of());
    EngineEventBatch batch =
        new EngineEventBatch(
            0,
            List.of(
                new EngineEvent.BlockStored(
                    new long[] {1, 2},
                    null,
                    new int[8],
                    4,
                    "a",
                    "CPU",
                    extras,
                    2,
                    "sliding_window",
                    128),
                new EngineEvent.BlockRemoved(new long[] {2}, "CPU", 2)),
            0);
    EngineEventBatch back = decoder.decode(new VllmEventEncoder(encoding).encode(batch));
    EngineEvent.BlockStored s = (EngineEvent.BlockStored) back.events().get(0);
    assertThat(s.extraKeys()).isEqualTo(extras);
    assertThat(s.group()).isEqualTo(2);
    assertThat(s.groupKind()).isEqualTo("sliding_window");
    assertThat(s.slidingWindow()).isEqualTo(128);
    assertThat(((EngineEvent.BlockRemoved) back.events().get(1)).group()).isEqualTo(2);
  }
}
