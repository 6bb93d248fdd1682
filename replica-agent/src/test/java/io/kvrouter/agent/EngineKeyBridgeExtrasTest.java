package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.agent.kvevents.MsgspecVectors;
import io.kvrouter.agent.kvevents.VllmEventDecoder;
import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The agent keys the blocks of a vLLM event with the adapter, salt and images the engine hashed
 * into them, so that they equal the keys the ingress computes from the client's request; and it
 * indexes a hybrid model's full-attention group only.
 */
class EngineKeyBridgeExtrasTest {

  private static final String MODEL = "m";
  private static final int BS = 4;
  private final RouterKeyFunction keys = new TrackerRouterKeys(MODEL);
  private final int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};

  /** What the ingress computes for a request for adapter sql-lora, salt tenant-a, one image. */
  private static long[] requestKeys(String lora, String salt, String image, int[] tokens) {
    ExtraKeys extras = ExtraKeys.of(lora, salt);
    if (image != null) {
      // the image's placeholder tokens are 2..5: they straddle blocks 0 and 1
      extras = extras.withMedia(image, 2, 4);
    }
    return BlockKeys.of(MODEL, BS).keys(tokens, extras);
  }

  private static List<KvEvent> bridged(EngineKeyBridge bridge, String encoding) {
    String hex = encoding.equals("map") ? MsgspecVectors.MAP : MsgspecVectors.POSITIONAL;
    return bridge.translate(new VllmEventDecoder().decode(HexFormat.of().parseHex(hex)).events());
  }

  @ParameterizedTest
  @ValueSource(strings = {"positional", "map"})
  void vllmStoreOfALoraSaltedImageRequest_getsTheKeysTheIngressComputesForThatRequest(
      String encoding) {
    EngineKeyBridge bridge = new EngineKeyBridge(keys, BS, 100);
    BlocksStored s = (BlocksStored) bridged(bridge, encoding).get(0);
    assertThat(s.tier()).isEqualTo(Tier.CPU);
    assertThat(s.blockKeys())
        .containsExactly(requestKeys("sql-lora", "tenant-a", MsgspecVectors.MM, tokens));
    assertThat(bridge.heldBlocks(Tier.CPU)).isEqualTo(2);
  }

  @Test
  void anotherSaltImageOrAdapter_neverSharesTheFirstBlocksKey() {
    EngineKeyBridge bridge = new EngineKeyBridge(keys, BS, 100);
    long first = ((BlocksStored) bridged(bridge, "map").get(0)).blockKeys()[0];
    String mm = MsgspecVectors.MM;
    assertThat(requestKeys("sql-lora", "tenant-b", mm, tokens)[0]).isNotEqualTo(first);
    assertThat(requestKeys("sql-lora", null, mm, tokens)[0]).isNotEqualTo(first);
    assertThat(requestKeys("sql-lora", "tenant-a", "b" + mm.substring(1), tokens)[0])
        .isNotEqualTo(first);
    assertThat(requestKeys("other-lora", "tenant-a", mm, tokens)[0]).isNotEqualTo(first);
    assertThat(requestKeys(null, "tenant-a", mm, tokens)[0]).isNotEqualTo(first);
    assertThat(requestKeys(null, null, null, tokens)[0]).isNotEqualTo(first);
  }

  @Test
  void saltEntersOnlyTheFirstBlock_soASaltedPromptsLaterBlocksStillChainFromASaltedParent() {
    EngineKeyBridge bridge = new EngineKeyBridge(keys, BS, 100);
    // a salted store of block 0, then block 1 under it in a later event, without the salt
    List<KvEvent> out =
        bridge.translate(
            List.of(
                stored(new long[] {1}, null, new int[] {1, 2, 3, 4}, List.of(salt("t"))),
                stored(new long[] {2}, 1L, new int[] {5, 6, 7, 8}, null)));
    long[] expected = requestKeys(null, "t", null, tokens);
    assertThat(((BlocksStored) out.get(0)).blockKeys()).containsExactly(expected[0]);
    assertThat(((BlocksStored) out.get(1)).blockKeys()).containsExactly(expected[1]);
  }

  @Test
  void extraInputsNoRequestCarries_dropTheRunInsteadOfKeyingItAsPlain() {
    EngineKeyBridge bridge = new EngineKeyBridge(keys, BS, 100);
    List<KvEvent> out =
        bridge.translate(
            List.of(
                stored(
                    new long[] {1},
                    null,
                    new int[] {1, 2, 3, 4},
                    List.of(new EngineEvent.OpaqueKey("bin")))));
    assertThat(out).isEmpty();
    assertThat(bridge.unresolved()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"positional", "map"})
  void slidingWindowGroup_isNotIndexedAndItsRemovalsLeaveTheFullAttentionGroupAlone(
      String encoding) {
    EngineKeyBridge bridge = new EngineKeyBridge(keys, BS, 100);
    // the vectors: a full-attention store (hashes 2^64-5, 7), a sliding-window store of hash 9
    // under 7, its removal, then a plain GPU store of hash 11
    List<KvEvent> out = bridged(bridge, encoding);
    assertThat(out).hasSize(2);
    assertThat(((BlocksStored) out.get(1)).engineHashes()).containsExactly(11L);
    // the full-attention group stores hash 9 too; the sliding-window group then drops it
    long[] full = ((BlocksStored) out.get(0)).blockKeys();
    List<KvEvent> later =
        bridge.translate(
            List.of(
                new EngineEvent.BlockStored(
                    new long[] {9},
                    7L,
                    new int[] {9, 10, 11, 12},
                    BS,
                    null,
                    null,
                    null,
                    0,
                    "full_attention",
                    0),
                new EngineEvent.BlockRemoved(new long[] {9}, null, 1),
                new EngineEvent.BlockRemoved(new long[] {9}, null, 0)));
    assertThat(((BlocksStored) later.get(0)).parentKey()).isEqualTo(full[1]);
    assertThat(later.get(1)).isEqualTo(new BlocksRemoved(new long[] {9}, Tier.GPU));
    assertThat(later).hasSize(2);
  }

  private static EngineEvent.ExtraKey salt(String s) {
    return new EngineEvent.TextKey(s);
  }

  private static EngineEvent.BlockStored stored(
      long[] hashes, Long parent, int[] tokens, List<EngineEvent.ExtraKey> firstBlockExtras) {
    List<List<EngineEvent.ExtraKey>> extras =
        firstBlockExtras == null ? null : List.of(firstBlockExtras);
    return new EngineEvent.BlockStored(hashes, parent, tokens, BS, null, null, extras, 0, null, 0);
  }
}
