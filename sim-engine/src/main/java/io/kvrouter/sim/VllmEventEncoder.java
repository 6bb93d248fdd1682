package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import io.kvrouter.protocol.engine.EventEncoding;
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
 * lora_id, medium, lora_name]}, and {@code extra_keys, group_idx, kv_cache_spec_kind,
 * kv_cache_spec_sliding_window} after them when the event has any of those) or a map tagged by
 * {@code "type"} with default (nil) fields omitted. Hashes go out as msgpack integers the way vLLM
 * ≥0.10.2 sends them: uint64 ({@code 0xcf}) when the unsigned value is at least 2^63.
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
      boolean current = hasNewFields(s);
      p.packArrayHeader(current ? 12 : 8);
      p.packString("BlockStored");
      hashes(p, s.blockHashes());
      nullableHash(p, s.parentHash());
      tokens(p, s.tokenIds());
      p.packInt(s.blockSize());
      p.packNil(); // lora_id (deprecated)
      nullableString(p, s.medium());
      nullableString(p, s.loraName());
      if (current) {
        extraKeys(p, s.extraKeys());
        p.packInt(s.group());
        nullableString(p, s.groupKind());
        if (s.slidingWindow() > 0) {
          p.packInt(s.slidingWindow());
        } else {
          p.packNil();
        }
      }
    } else if (e instanceof EngineEvent.BlockRemoved r) {
      p.packArrayHeader(r.group() == 0 ? 3 : 4);
      p.packString("BlockRemoved");
      hashes(p, r.blockHashes());
      nullableString(p, r.medium());
      if (r.group() != 0) {
        p.packInt(r.group());
      }
    } else {
      p.packArrayHeader(1);
      p.packString("AllBlocksCleared");
    }
  }

  private static void map(MessagePacker p, EngineEvent e) throws IOException {
    if (e instanceof EngineEvent.BlockStored s) {
      int n =
          5
              + (s.medium() == null ? 0 : 1)
              + (s.loraName() == null ? 0 : 1)
              + (s.extraKeys() == null ? 0 : 1)
              + (s.groupKind() == null ? 0 : 2)
              + (s.slidingWindow() > 0 ? 1 : 0);
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
      if (s.extraKeys() != null) {
        p.packString("extra_keys");
        extraKeys(p, s.extraKeys());
      }
      if (s.groupKind() != null) {
        p.packString("group_idx").packInt(s.group());
        p.packString("kv_cache_spec_kind").packString(s.groupKind());
      }
      if (s.slidingWindow() > 0) {
        p.packString("kv_cache_spec_sliding_window").packInt(s.slidingWindow());
      }
    } else if (e instanceof EngineEvent.BlockRemoved r) {
      p.packMapHeader((r.medium() == null ? 2 : 3) + (r.group() == 0 ? 0 : 1));
      p.packString("type").packString("BlockRemoved");
      p.packString("block_hashes");
      hashes(p, r.blockHashes());
      if (r.medium() != null) {
        p.packString("medium").packString(r.medium());
      }
      if (r.group() != 0) {
        p.packString("group_idx").packInt(r.group());
      }
    } else {
      p.packMapHeader(1);
      p.packString("type").packString("AllBlocksCleared");
    }
  }

  private static boolean hasNewFields(EngineEvent.BlockStored s) {
    return s.extraKeys() != null || s.groupKind() != null || s.group() != 0;
  }

  /**
   * Per block nil or the tuple vLLM's {@code generate_block_hash_extra_keys} builds: strings as
   * strings, multimodal items as {@code [identifier, offset]}.
   */
  private static void extraKeys(
      MessagePacker p, java.util.List<java.util.List<EngineEvent.ExtraKey>> keys)
      throws IOException {
    if (keys == null) {
      p.packNil();
      return;
    }
    p.packArrayHeader(keys.size());
    for (java.util.List<EngineEvent.ExtraKey> block : keys) {
      if (block.isEmpty()) {
        p.packNil();
        continue;
      }
      p.packArrayHeader(block.size());
      for (EngineEvent.ExtraKey k : block) {
        if (k instanceof EngineEvent.TextKey t) {
          p.packString(t.value());
        } else if (k instanceof EngineEvent.LoraKey l) {
          p.packString(l.name());
        } else if (k instanceof EngineEvent.SaltKey salt) {
          p.packString(salt.salt());
        } else if (k instanceof EngineEvent.MediaKey m) {
          p.packArrayHeader(2);
          p.packString(m.identifier());
          p.packLong(m.offset());
        } else {
          p.packBinaryHeader(0); // an opaque item (prompt-embedding hash): empty bytes
        }
      }
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
