package io.kvrouter.agent.kvevents;

import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Decodes vLLM's and SGLang's msgpack KV-event payloads (frame 2 of a KV-event message) into {@link
 * EngineEventBatch}es, tolerating every variant of vLLM's {@code vllm/distributed/kv_events.py} and
 * SGLang's {@code python/sglang/srt/disaggregation/kv_events.py} described in {@code
 * docs/kv-events.md}, section 2.
 *
 * <ul>
 *   <li>The batch is decoded by msgpack type: array {@code [ts, events, dp_rank?]} or map {@code
 *       {ts, events, data_parallel_rank}}.
 *   <li>Each event is decoded by msgpack type: array (positional, tag first) or map (tag under
 *       {@code "type"}, in any position, missing fields default to nil).
 *   <li>Hashes may be int64 (negative values are kept bitwise, as Dynamo does), uint64 above 2^63
 *       (read through BigInteger, msgpack-java's {@code unpackLong} would throw), or bin (last 8
 *       bytes big-endian, left-padded when shorter, as llm-d does).
 *   <li>{@code extra_keys} (per block: bare strings, {@code [identifier, offset]} pairs, bytes, or
 *       newer main's tagged structs) are read by {@link ExtraKeysReader}; {@code group_idx}, {@code
 *       kv_cache_spec_kind} and {@code kv_cache_spec_sliding_window} name a hybrid model's cache
 *       group (vLLM main {@code vllm/distributed/kv_events.py}, vMaroon/vllm fork 08ee3e54).
 *   <li>Unknown fields, unknown tags (skipped event) and fields of an unexpected type (treated as
 *       absent) are ignored. SGLang's salted {@code BlockStored} (its {@code
 *       BlockStoredWithMetadata} class, tagged {@code "BlockStored"} on the wire, with a trailing
 *       {@code metadata} map) reads as BlockStored; the class name as a tag is accepted too.
 * </ul>
 *
 * <p>Stateless and thread-safe. Cost: linear in the payload; one array per hash/token list.
 */
public final class VllmEventDecoder {

  /** Thrown when a payload is not a KV-event batch at all. */
  public static final class MalformedBatchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MalformedBatchException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Decodes one payload; throws {@link MalformedBatchException} if it is not a batch. */
  public EngineEventBatch decode(byte[] payload) {
    try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
      ValueType type = u.getNextFormat().getValueType();
      double ts = 0;
      List<EngineEvent> events = new ArrayList<>();
      Integer rank = null;
      if (type == ValueType.ARRAY) {
        int n = u.unpackArrayHeader();
        for (int i = 0; i < n; i++) {
          switch (i) {
            case 0 -> ts = readNumber(u);
            case 1 -> readEvents(u, events);
            case 2 -> rank = readIntOrNull(u);
            default -> u.skipValue();
          }
        }
      } else if (type == ValueType.MAP) {
        int n = u.unpackMapHeader();
        for (int i = 0; i < n; i++) {
          String key = readKey(u);
          switch (key == null ? "" : key) {
            case "ts" -> ts = readNumber(u);
            case "events" -> readEvents(u, events);
            case "data_parallel_rank", "attn_dp_rank", "dp_rank" -> rank = readIntOrNull(u);
            default -> u.skipValue();
          }
        }
      } else {
        throw new MalformedBatchException("batch is neither array nor map: " + type, null);
      }
      return new EngineEventBatch(ts, events, rank);
    } catch (IOException | RuntimeException e) {
      if (e instanceof MalformedBatchException m) {
        throw m;
      }
      throw new MalformedBatchException("cannot decode KV-event batch: " + e.getMessage(), e);
    }
  }

  private static void readEvents(MessageUnpacker u, List<EngineEvent> out) throws IOException {
    if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
      u.skipValue();
      return;
    }
    int n = u.unpackArrayHeader();
    for (int i = 0; i < n; i++) {
      EngineEvent e = readEvent(u);
      if (e != null) {
        out.add(e);
      }
    }
  }

  /** Field holder while decoding one event; names as in vLLM. */
  private static final class Fields {
    String tag;
    long[] blockHashes;
    boolean hasParent;
    long parent;
    int[] tokenIds;
    int blockSize;
    String medium;
    String loraName;
    List<List<EngineEvent.ExtraKey>> extraKeys;
    int group;
    String groupKind;
    int slidingWindow;
  }

  private static final String[] STORED_POSITIONS = {
    "type",
    "block_hashes",
    "parent_block_hash",
    "token_ids",
    "block_size",
    "lora_id",
    "medium",
    "lora_name",
    "extra_keys",
    "group_idx",
    "kv_cache_spec_kind",
    "kv_cache_spec_sliding_window"
  };
  private static final String[] REMOVED_POSITIONS = {"type", "block_hashes", "medium", "group_idx"};

  private static EngineEvent readEvent(MessageUnpacker u) throws IOException {
    ValueType type = u.getNextFormat().getValueType();
    Fields f = new Fields();
    if (type == ValueType.ARRAY) {
      int n = u.unpackArrayHeader();
      if (n == 0) {
        return null;
      }
      f.tag = readStringOrNull(u);
      String[] positions =
          f.tag != null && f.tag.startsWith("BlockStored")
              ? STORED_POSITIONS
              : "BlockRemoved".equals(f.tag) ? REMOVED_POSITIONS : new String[1];
      for (int i = 1; i < n; i++) {
        readField(u, i < positions.length ? positions[i] : null, f);
      }
    } else if (type == ValueType.MAP) {
      int n = u.unpackMapHeader();
      for (int i = 0; i < n; i++) {
        String key = readKey(u);
        if ("type".equals(key)) {
          f.tag = readStringOrNull(u);
        } else {
          readField(u, key, f);
        }
      }
    } else {
      u.skipValue();
      return null;
    }
    if (f.tag == null) {
      return null;
    }
    switch (f.tag) {
      case "BlockStored", "BlockStoredWithMetadata" -> {
        if (f.blockHashes == null) {
          return null;
        }
        return new EngineEvent.BlockStored(
            f.blockHashes,
            f.hasParent ? f.parent : null,
            f.tokenIds == null ? new int[0] : f.tokenIds,
            f.blockSize,
            f.loraName,
            f.medium,
            f.extraKeys,
            f.group,
            f.groupKind,
            f.slidingWindow);
      }
      case "BlockRemoved" -> {
        return f.blockHashes == null
            ? null
            : new EngineEvent.BlockRemoved(f.blockHashes, f.medium, f.group);
      }
      case "AllBlocksCleared" -> {
        return new EngineEvent.AllBlocksCleared();
      }
      default -> {
        return null;
      }
    }
  }

  private static void readField(MessageUnpacker u, String name, Fields f) throws IOException {
    if (name == null) {
      u.skipValue();
      return;
    }
    switch (name) {
      case "block_hashes" -> f.blockHashes = readHashes(u);
      case "parent_block_hash" -> {
        if (u.tryUnpackNil()) {
          f.hasParent = false;
        } else {
          Long h = readHashOrNull(u);
          f.hasParent = h != null;
          f.parent = h == null ? 0 : h;
        }
      }
      case "token_ids" -> f.tokenIds = readInts(u);
      case "block_size" -> {
        Integer b = readIntOrNull(u);
        f.blockSize = b == null ? 0 : b;
      }
      case "medium" -> f.medium = readStringOrNull(u);
      case "lora_name" -> f.loraName = readStringOrNull(u);
      case "extra_keys" -> f.extraKeys = ExtraKeysReader.read(u);
      case "group_idx" -> {
        Integer g = readIntOrNull(u);
        f.group = g == null ? 0 : g;
      }
      case "kv_cache_spec_kind" -> f.groupKind = readStringOrNull(u);
      case "kv_cache_spec_sliding_window" -> {
        Integer w = readIntOrNull(u);
        f.slidingWindow = w == null ? 0 : w;
      }
      default -> u.skipValue();
    }
  }

  private static long[] readHashes(MessageUnpacker u) throws IOException {
    if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
      u.skipValue();
      return null;
    }
    int n = u.unpackArrayHeader();
    long[] out = new long[n];
    int k = 0;
    for (int i = 0; i < n; i++) {
      Long h = readHashOrNull(u);
      if (h != null) {
        out[k++] = h;
      }
    }
    return k == n ? out : java.util.Arrays.copyOf(out, k);
  }

  /**
   * Reads one engine hash as an unsigned 64-bit value in a {@code long}: int64 bitwise, uint64 via
   * BigInteger, bin as its last 8 bytes big-endian. Anything else is skipped and gives null.
   */
  static Long readHashOrNull(MessageUnpacker u) throws IOException {
    MessageFormat format = u.getNextFormat();
    ValueType type = format.getValueType();
    if (type == ValueType.INTEGER) {
      if (format == MessageFormat.UINT64) {
        return u.unpackBigInteger().longValue();
      }
      return u.unpackLong();
    }
    if (type == ValueType.BINARY) {
      int len = u.unpackBinaryHeader();
      byte[] bytes = u.readPayload(len);
      long v = 0;
      for (int i = Math.max(0, len - 8); i < len; i++) {
        v = (v << 8) | (bytes[i] & 0xFF);
      }
      return v;
    }
    u.skipValue();
    return null;
  }

  private static int[] readInts(MessageUnpacker u) throws IOException {
    if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
      u.skipValue();
      return null;
    }
    int n = u.unpackArrayHeader();
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      if (u.getNextFormat().getValueType() == ValueType.INTEGER) {
        out[i] = (int) u.unpackLong();
      } else {
        // EAGLE bigram pages and other shapes: not a plain token; keep the position, value 0.
        u.skipValue();
      }
    }
    return out;
  }

  static Integer readIntOrNull(MessageUnpacker u) throws IOException {
    if (u.getNextFormat().getValueType() == ValueType.INTEGER) {
      return (int) u.unpackLong();
    }
    u.skipValue();
    return null;
  }

  private static double readNumber(MessageUnpacker u) throws IOException {
    ValueType t = u.getNextFormat().getValueType();
    if (t == ValueType.FLOAT) {
      return u.unpackDouble();
    }
    if (t == ValueType.INTEGER) {
      return u.unpackLong();
    }
    u.skipValue();
    return 0;
  }

  static String readStringOrNull(MessageUnpacker u) throws IOException {
    if (u.getNextFormat().getValueType() == ValueType.STRING) {
      return u.unpackString();
    }
    u.skipValue();
    return null;
  }

  private static String readKey(MessageUnpacker u) throws IOException {
    return readStringOrNull(u);
  }
}
