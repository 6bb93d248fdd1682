package io.kvrouter.agent.kvevents;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * Encodes an {@link EngineEventBatch} as vLLM's msgspec msgpack payload (frame 2 of a KV-event
 * message).
 *
 * <p>Layout follows vLLM {@code vllm/distributed/kv_events.py} (see {@code docs/kv-events.md},
 * section 2): the batch is always positional {@code [ts, events, dp_rank]}; each event is
 * positional ({@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size,
 * lora_id, medium, lora_name]}) or a map tagged by {@code "type"} with default (nil) fields
 * omitted. Hashes go out as msgpack integers the way vLLM ≥0.10.2 sends them: uint64 ({@code 0xcf})
 * when the unsigned value is at least 2^63.
 *
 * <p>Stateless and thread-safe. Cost: one buffer allocation per batch, linear in its size.
 */
public final class VllmEventEncoder {

  private final EventEncoding encoding;

  public VllmEventEncoder(EventEncoding encoding) {
    this.encoding = java.util.Objects.requireNonNull(encoding, "encoding");
  }

  /** The msgpack bytes of the batch. */
  public byte[] encode(EngineEventBatch batch) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packArrayHeader(3);
      p.packDouble(batch.timestamp());
      p.packArrayHeader(batch.events().size());
      for (EngineEvent e : batch.events()) {
        if (encoding == EventEncoding.POSITIONAL) {
          positional(p, e);
        } else {
          map(p, e);
        }
      }
      if (batch.dpRank() == null) {
        p.packNil();
      } else {
        p.packInt(batch.dpRank());
      }
      return p.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void positional(MessagePacker p, EngineEvent e) throws IOException {
    if (e instanceof EngineEvent.BlockStored s) {
      p.packArrayHeader(8);
      p.packString("BlockStored");
      hashes(p, s.blockHashes());
      nullableHash(p, s.parentHash());
      tokens(p, s.tokenIds());
      p.packInt(s.blockSize());
      p.packNil(); // lora_id (deprecated)
      nullableString(p, s.medium());
      nullableString(p, s.loraName());
    } else if (e instanceof EngineEvent.BlockRemoved r) {
      p.packArrayHeader(3);
      p.packString("BlockRemoved");
      hashes(p, r.blockHashes());
      nullableString(p, r.medium());
    } else {
      p.packArrayHeader(1);
      p.packString("AllBlocksCleared");
    }
  }

  private static void map(MessagePacker p, EngineEvent e) throws IOException {
    if (e instanceof EngineEvent.BlockStored s) {
      int n = 5 + (s.medium() == null ? 0 : 1) + (s.loraName() == null ? 0 : 1);
      p.packMapHeader(n);
      p.packString("type").packString("BlockStored");
      p.packString("block_hashes");
      hashes(p, s.blockHashes());
      p.packString("parent_block_hash");
      nullableHash(p, s.parentHash());
      p.packString("token_ids");
      tokens(p, s.tokenIds());
      p.packString("block_size").packInt(s.blockSize());
      if (s.medium() != null) {
        p.packString("medium").packString(s.medium());
      }
      if (s.loraName() != null) {
        p.packString("lora_name").packString(s.loraName());
      }
    } else if (e instanceof EngineEvent.BlockRemoved r) {
      p.packMapHeader(r.medium() == null ? 2 : 3);
      p.packString("type").packString("BlockRemoved");
      p.packString("block_hashes");
      hashes(p, r.blockHashes());
      if (r.medium() != null) {
        p.packString("medium").packString(r.medium());
      }
    } else {
      p.packMapHeader(1);
      p.packString("type").packString("AllBlocksCleared");
    }
  }

  /** Packs an unsigned 64-bit value held in a {@code long} as a msgpack (u)int. */
  static void packUnsigned(MessagePacker p, long v) throws IOException {
    if (v >= 0) {
      p.packLong(v);
    } else {
      p.packBigInteger(new BigInteger(Long.toUnsignedString(v)));
    }
  }

  private static void hashes(MessagePacker p, long[] hashes) throws IOException {
    p.packArrayHeader(hashes.length);
    for (long h : hashes) {
      packUnsigned(p, h);
    }
  }

  private static void nullableHash(MessagePacker p, Long h) throws IOException {
    if (h == null) {
      p.packNil();
    } else {
      packUnsigned(p, h);
    }
  }

  private static void tokens(MessagePacker p, int[] tokens) throws IOException {
    p.packArrayHeader(tokens.length);
    for (int t : tokens) {
      p.packInt(t);
    }
  }

  private static void nullableString(MessagePacker p, String s) throws IOException {
    if (s == null) {
      p.packNil();
    } else {
      p.packString(s);
    }
  }
}
