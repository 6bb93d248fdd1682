package io.kvrouter.agent.kvevents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import io.kvrouter.protocol.engine.EventEncoding;
import io.kvrouter.sim.VllmEventEncoder;
import java.io.IOException;
import java.math.BigInteger;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

class VllmEventCodecTest {

  private final VllmEventDecoder decoder = new VllmEventDecoder();

  private static EngineEventBatch sample() {
    return new EngineEventBatch(
        1.5,
        List.of(
            new EngineEvent.BlockStored(
                new long[] {1, -2, Long.MIN_VALUE}, null, new int[48], 16, null, null),
            new EngineEvent.BlockStored(new long[] {9}, -1L, new int[] {}, 16, "adapter", "CPU"),
            new EngineEvent.BlockRemoved(new long[] {-2}, null),
            new EngineEvent.AllBlocksCleared()),
        3);
  }

  @ParameterizedTest
  @EnumSource(EventEncoding.class)
  void encodeThenDecode_roundTripsEveryEventAndHashBitwise(EventEncoding encoding) {
    EngineEventBatch batch = sample();
    EngineEventBatch back = decoder.decode(new VllmEventEncoder(encoding).encode(batch));
    assertThat(back.timestamp()).isEqualTo(1.5);
    assertThat(back.dpRank()).isEqualTo(3);
    assertThat(back.events()).hasSize(4);
    EngineEvent.BlockStored s0 = (EngineEvent.BlockStored) back.events().get(0);
    assertThat(s0.blockHashes()).containsExactly(1, -2, Long.MIN_VALUE);
    assertThat(s0.parentHash()).isNull();
    assertThat(s0.tokenIds()).hasSize(48);
    assertThat(s0.blockSize()).isEqualTo(16);
    EngineEvent.BlockStored s1 = (EngineEvent.BlockStored) back.events().get(1);
    assertThat(s1.parentHash()).isEqualTo(-1L);
    assertThat(s1.tokenIds()).isEmpty();
    assertThat(s1.loraName()).isEqualTo("adapter");
    assertThat(s1.medium()).isEqualTo("CPU");
    assertThat(((EngineEvent.BlockRemoved) back.events().get(2)).blockHashes()).containsExactly(-2);
    assertThat(back.events().get(3)).isInstanceOf(EngineEvent.AllBlocksCleared.class);
  }

  @Test
  void encoder_writesUint64ForHashesAboveTwoToThe63_asVllmDoes() {
    byte[] bytes =
        new VllmEventEncoder(EventEncoding.POSITIONAL)
            .encode(
                new EngineEventBatch(
                    0, List.of(new EngineEvent.BlockRemoved(new long[] {-1}, null)), 0));
    assertThat(HexFormat.of().formatHex(bytes)).contains("cfffffffffffffffff");
  }

  @Test
  void positionalMap_isEncodedAsArrayWithTagFirst_mapAsTypeKeyWithNilsOmitted() throws IOException {
    EngineEventBatch b =
        new EngineEventBatch(0, List.of(new EngineEvent.BlockRemoved(new long[] {5}, null)), 0);
    var pos =
        MessagePack.newDefaultUnpacker(new VllmEventEncoder(EventEncoding.POSITIONAL).encode(b));
    pos.unpackArrayHeader();
    pos.skipValue();
    pos.unpackArrayHeader();
    assertThat(pos.unpackArrayHeader()).isEqualTo(3);
    assertThat(pos.unpackString()).isEqualTo("BlockRemoved");
    var map = MessagePack.newDefaultUnpacker(new VllmEventEncoder(EventEncoding.MAP).encode(b));
    map.unpackArrayHeader();
    map.skipValue();
    map.unpackArrayHeader();
    assertThat(map.unpackMapHeader()).isEqualTo(2);
    assertThat(map.unpackString()).isEqualTo("type");
    assertThat(map.unpackString()).isEqualTo("BlockRemoved");
  }

  @Test
  void hashes_asSignedUnsignedAndBytes_allDecodeToTheUnsigned64Bits() throws IOException {
    byte[] sha = new byte[32];
    for (int i = 0; i < 32; i++) {
      sha[i] = (byte) i;
    }
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packArrayHeader(3).packDouble(0);
    p.packArrayHeader(1);
    p.packArrayHeader(2).packString("BlockRemoved");
    p.packArrayHeader(5);
    p.packLong(-5); // int64 (old builtin hash(), SGLang)
    p.packBigInteger(new BigInteger("18446744073709551615")); // uint64 max
    p.packLong(42);
    p.packBinaryHeader(32).writePayload(sha); // full sha256 digest
    p.packBinaryHeader(2).writePayload(new byte[] {1, 2}); // short bin: left-padded
    p.packInt(0);
    long[] hashes =
        ((EngineEvent.BlockRemoved) decoder.decode(p.toByteArray()).events().get(0)).blockHashes();
    assertThat(hashes).containsExactly(-5L, -1L, 42L, 0x18191a1b1c1d1e1fL, 0x0102L);
  }

  @Test
  void unknownFieldsTagsAndExtraPositions_areIgnored() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packMapHeader(4); // a map-encoded batch, with an unknown key
    p.packString("events").packArrayHeader(4);
    // a future event type
    p.packMapHeader(2).packString("type").packString("BlocksPinned").packString("x").packInt(1);
    // map BlockStored with type last, unknown fields and a tagged extra_keys struct
    p.packMapHeader(7);
    p.packString("block_hashes").packArrayHeader(1).packLong(77);
    p.packString("token_ids").packArrayHeader(2).packInt(1).packInt(2);
    p.packString("block_size").packInt(2);
    p.packString("event_version").packInt(1);
    p.packString("extra_keys")
        .packArrayHeader(1)
        .packMapHeader(1)
        .packString("lora")
        .packString("z");
    p.packString("parent_block_hash").packNil();
    p.packString("type").packString("BlockStored");
    // positional BlockStored with every newer field (lora_name, extra_keys, group_idx, spec
    // kind...)
    p.packArrayHeader(13).packString("BlockStored");
    p.packArrayHeader(1).packLong(78);
    p.packLong(77);
    p.packArrayHeader(2).packInt(3).packInt(4);
    p.packInt(2)
        .packNil()
        .packString("GPU")
        .packString("lora-x")
        .packNil()
        .packInt(0)
        .packString("full_attention")
        .packNil()
        .packString("future");
    // an event that is neither array nor map
    p.packString("garbage");
    p.packString("ts").packDouble(2.0);
    p.packString("data_parallel_rank").packInt(1);
    p.packString("producer").packString("someone");
    EngineEventBatch b = decoder.decode(p.toByteArray());
    assertThat(b.timestamp()).isEqualTo(2.0);
    assertThat(b.dpRank()).isEqualTo(1);
    assertThat(b.events()).hasSize(2);
    EngineEvent.BlockStored m = (EngineEvent.BlockStored) b.events().get(0);
    assertThat(m.blockHashes()).containsExactly(77);
    assertThat(m.parentHash()).isNull();
    assertThat(m.tokenIds()).containsExactly(1, 2);
    EngineEvent.BlockStored pos = (EngineEvent.BlockStored) b.events().get(1);
    assertThat(pos.parentHash()).isEqualTo(77L);
    assertThat(pos.loraName()).isEqualTo("lora-x");
    assertThat(pos.medium()).isEqualTo("GPU");
  }

  @Test
  void oldTwoFieldBatchAndSglangStoredWithMetadata_decode() throws IOException {
    MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
    p.packArrayHeader(2).packLong(7); // integer ts, no dp rank
    p.packArrayHeader(1);
    // SGLang's salted BlockStored (class BlockStoredWithMetadata, tag "BlockStored" on the wire,
    // python/sglang/srt/disaggregation/kv_events.py): a metadata map where vLLM has lora_name.
    p.packArrayHeader(8).packString("BlockStored");
    p.packArrayHeader(1).packLong(-9);
    p.packNil();
    p.packArrayHeader(0); // empty token ids
    p.packInt(1).packNil().packNil();
    p.packMapHeader(1).packString("cache_salt").packString("s");
    EngineEventBatch b = decoder.decode(p.toByteArray());
    assertThat(b.timestamp()).isEqualTo(7.0);
    assertThat(b.dpRank()).isNull();
    EngineEvent.BlockStored s = (EngineEvent.BlockStored) b.events().get(0);
    assertThat(s.blockHashes()).containsExactly(-9);
    assertThat(s.tokenIds()).isEmpty();
    assertThat(s.loraName()).isNull();
  }

  @Test
  void nonBatchPayload_isRejectedWithAClearError() {
    assertThatThrownBy(() -> decoder.decode(new byte[] {(byte) 0xa1, 'x'}))
        .isInstanceOf(VllmEventDecoder.MalformedBatchException.class);
    assertThatThrownBy(() -> decoder.decode(new byte[] {(byte) 0x93}))
        .isInstanceOf(VllmEventDecoder.MalformedBatchException.class);
  }
}
