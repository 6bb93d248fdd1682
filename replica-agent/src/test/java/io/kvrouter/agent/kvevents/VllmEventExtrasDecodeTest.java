package io.kvrouter.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fields vLLM added to its KV events for tiers, LoRA, multimodal inputs and hybrid models
 * ({@code medium}, {@code lora_name}, {@code extra_keys}, {@code group_idx}, {@code
 * kv_cache_spec_kind}, {@code kv_cache_spec_sliding_window}) decode from the bytes vLLM's msgspec
 * writes.
 *
 * <p>The two payloads below were written by msgspec 0.22.0's {@code msgspec.msgpack.encode} from
 * structs declared field for field as {@code BlockStored}, {@code BlockRemoved} and {@code
 * EventBatch} in vllm-project/vllm {@code vllm/distributed/kv_events.py} at commit 0181ea31
 * (tagged, {@code omit_defaults=True}): once as that commit declares them (no {@code array_like}:
 * the batch and every event are maps, nil fields without a default written, defaulted ones omitted)
 * and once with {@code array_like=True}, the positional form vLLM up to 0.11 publishes. The batch
 * is {@code EventBatch(ts=1.5, data_parallel_rank=0, events=[...])} with:
 *
 * <ol>
 *   <li>{@code BlockStored(block_hashes=[2**64-5, 7], parent_block_hash=None, token_ids=[1..8],
 *       block_size=4, lora_id=None, medium="CPU", lora_name="sql-lora", extra_keys=[("sql-lora",
 *       (MM, 2), "tenant-a"), ("sql-lora", (MM, -2))], group_idx=0,
 *       kv_cache_spec_kind="full_attention")}: the extra-key tuples {@code
 *       generate_block_hash_extra_keys} builds in {@code vllm/v1/core/kv_cache_utils.py} (at
 *       001cabc1) for a LoRA request with a salt and an image whose placeholder starts two tokens
 *       into block 0: adapter name, {@code (identifier, offset - block start)}, salt on block 0;
 *   <li>{@code BlockStored(block_hashes=[9], parent_block_hash=7, token_ids=[9..12], block_size=4,
 *       lora_id=None, medium=None, lora_name=None, group_idx=1,
 *       kv_cache_spec_kind="sliding_window", kv_cache_spec_sliding_window=4096)};
 *   <li>{@code BlockRemoved(block_hashes=[9], medium="GPU", group_idx=1)};
 *   <li>{@code BlockStored(block_hashes=[11], parent_block_hash=None, token_ids=[1..4],
 *       block_size=4, lora_id=None, medium="GPU", lora_name=None)}: no new field at all.
 * </ol>
 *
 * {@code MM} is {@code "a3f1" * 16}, shaped like vLLM's 64-hex-digit BLAKE3 {@code mm_hash}.
 */
class VllmEventExtrasDecodeTest {

  private static final String MM = "a3f1".repeat(16);

  /** msgspec, {@code array_like=True}. */
  private static final String POSITIONAL =
      "93cb3ff8000000000000949cab426c6f636b53746f72656492cffffffffffffffffb07c0980102030405"
          + "06070804c0a3435055a873716c2d6c6f72619293a873716c2d6c6f726192d94061336631613366316133"
          + "663161336631613366316133663161336631613366316133663161336631613366316133663161336631"
          + "61336631613366316133663102a874656e616e742d6192a873716c2d6c6f726192d94061336631613366"
          + "316133663161336631613366316133663161336631613366316133663161336631613366316133663161"
          + "336631613366316133663161336631fe00ae66756c6c5f617474656e74696f6ec09cab426c6f636b5374"
          + "6f72656491090794090a0b0c04c0c0c0c001ae736c6964696e675f77696e646f77cd100094ac426c6f63"
          + "6b52656d6f7665649109a3475055019cab426c6f636b53746f726564910bc0940102030404c0a3475055"
          + "c0c0c0c0c000";

  /** msgspec, as vLLM main declares the structs (maps). */
  private static final String MAP =
      "83a27473cb3ff8000000000000a66576656e7473948ba474797065ab426c6f636b53746f726564ac626c"
          + "6f636b5f68617368657392cffffffffffffffffb07b1706172656e745f626c6f636b5f68617368c0a974"
          + "6f6b656e5f696473980102030405060708aa626c6f636b5f73697a6504a76c6f72615f6964c0a66d6564"
          + "69756da3435055a96c6f72615f6e616d65a873716c2d6c6f7261aa65787472615f6b6579739293a87371"
          + "6c2d6c6f726192d940613366316133663161336631613366316133663161336631613366316133663161"
          + "3366316133663161336631613366316133663161336631613366316133663102a874656e616e742d6192"
          + "a873716c2d6c6f726192d940613366316133663161336631613366316133663161336631613366316133"
          + "66316133663161336631613366316133663161336631613366316133663161336631fea967726f75705f"
          + "69647800b26b765f63616368655f737065635f6b696e64ae66756c6c5f617474656e74696f6e8ba47479"
          + "7065ab426c6f636b53746f726564ac626c6f636b5f6861736865739109b1706172656e745f626c6f636b"
          + "5f6861736807a9746f6b656e5f69647394090a0b0caa626c6f636b5f73697a6504a76c6f72615f6964c0"
          + "a66d656469756dc0a96c6f72615f6e616d65c0a967726f75705f69647801b26b765f63616368655f7370"
          + "65635f6b696e64ae736c6964696e675f77696e646f77bc6b765f63616368655f737065635f736c696469"
          + "6e675f77696e646f77cd100084a474797065ac426c6f636b52656d6f766564ac626c6f636b5f68617368"
          + "65739109a66d656469756da3475055a967726f75705f6964780188a474797065ab426c6f636b53746f72"
          + "6564ac626c6f636b5f686173686573910bb1706172656e745f626c6f636b5f68617368c0a9746f6b656e"
          + "5f6964739401020304aa626c6f636b5f73697a6504a76c6f72615f6964c0a66d656469756da3475055a9"
          + "6c6f72615f6e616d65c0b2646174615f706172616c6c656c5f72616e6b00";

  private final VllmEventDecoder decoder = new VllmEventDecoder();

  private EngineEventBatch decode(String which) {
    return decoder.decode(HexFormat.of().parseHex(which.equals("map") ? MAP : POSITIONAL));
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
