package io.kvrouter.agent.kvevents;

/**
 * KV-event payloads exactly as vLLM's msgspec writes them, with every field vLLM added for tiers,
 * LoRA, multimodal inputs and hybrid models.
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
public final class MsgspecVectors {

  /** The multimodal identifier in the payloads. */
  public static final String MM = "a3f1".repeat(16);

  /** msgspec, {@code array_like=True}. */
  public static final String POSITIONAL =
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
  public static final String MAP =
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

  private MsgspecVectors() {}
}
