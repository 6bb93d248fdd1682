package io.kvrouter.agent.kvevents;

import io.kvrouter.protocol.engine.EngineEvent;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Reads a {@code BlockStored}'s {@code extra_keys}: one entry per block, nil (no extra inputs) or
 * an array of items. Items come in two generations of vLLM's {@code vllm/distributed/kv_events.py}:
 *
 * <ul>
 *   <li>the tuples {@code generate_block_hash_extra_keys} builds ({@code
 *       vllm/v1/core/kv_cache_utils.py} at 001cabc1): a string (adapter name, then cache salt on
 *       the first block), a {@code [identifier, offset]} array per multimodal item, bytes for a
 *       prompt-embedding slice;
 *   <li>newer main's tagged structs, maps with {@code "type"}: {@code lora} {@code {name}}, {@code
 *       cache_salt} {@code {salt}}, {@code mm} {@code {modality, hash, block_offset}}, {@code
 *       prompt_embeds} {@code {hash}}, {@code legacy} {@code {value}} (the value read as a bare
 *       item).
 * </ul>
 *
 * Anything else becomes an {@link EngineEvent.OpaqueKey}, which makes its block unkeyable (the
 * bridge drops such a run rather than give it a key that a request could wrongly match). Stateless.
 */
final class ExtraKeysReader {

  private ExtraKeysReader() {}

  /** The per-block lists, or null when the field is nil or not an array. */
  static List<List<EngineEvent.ExtraKey>> read(MessageUnpacker u) throws IOException {
    if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
      u.skipValue();
      return null;
    }
    int n = u.unpackArrayHeader();
    List<List<EngineEvent.ExtraKey>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ValueType t = u.getNextFormat().getValueType();
      if (t == ValueType.ARRAY) {
        int m = u.unpackArrayHeader();
        List<EngineEvent.ExtraKey> items = new ArrayList<>(m);
        for (int j = 0; j < m; j++) {
          items.add(item(u));
        }
        out.add(List.copyOf(items));
      } else {
        u.skipValue(); // nil: a block without extra inputs
        out.add(List.of());
      }
    }
    return out;
  }

  private static EngineEvent.ExtraKey item(MessageUnpacker u) throws IOException {
    ValueType t = u.getNextFormat().getValueType();
    switch (t) {
      case STRING -> {
        return new EngineEvent.TextKey(u.unpackString());
      }
      case ARRAY -> {
        int n = u.unpackArrayHeader();
        String id = null;
        Long offset = null;
        for (int i = 0; i < n; i++) {
          ValueType et = u.getNextFormat().getValueType();
          if (i == 0 && et == ValueType.STRING) {
            id = u.unpackString();
          } else if (i == 1 && et == ValueType.INTEGER) {
            offset = u.unpackLong();
          } else {
            u.skipValue();
          }
        }
        return id != null && offset != null && n == 2
            ? new EngineEvent.MediaKey(id, offset)
            : new EngineEvent.OpaqueKey("array of " + n);
      }
      case MAP -> {
        return tagged(u);
      }
      default -> {
        u.skipValue();
        return new EngineEvent.OpaqueKey(t.name().toLowerCase(java.util.Locale.ROOT));
      }
    }
  }

  private static EngineEvent.ExtraKey tagged(MessageUnpacker u) throws IOException {
    int n = u.unpackMapHeader();
    String type = null;
    String name = null;
    String salt = null;
    String hash = null;
    Long offset = null;
    EngineEvent.ExtraKey legacy = null;
    for (int i = 0; i < n; i++) {
      String key = VllmEventDecoder.readStringOrNull(u);
      switch (key == null ? "" : key) {
        case "type" -> type = VllmEventDecoder.readStringOrNull(u);
        case "name" -> name = VllmEventDecoder.readStringOrNull(u);
        case "salt" -> salt = VllmEventDecoder.readStringOrNull(u);
        case "hash" -> hash = VllmEventDecoder.readStringOrNull(u);
        case "block_offset" -> {
          Integer o = VllmEventDecoder.readIntOrNull(u);
          offset = o == null ? null : o.longValue();
        }
        case "value" -> legacy = item(u);
        default -> u.skipValue();
      }
    }
    if ("lora".equals(type) && name != null) {
      return new EngineEvent.LoraKey(name);
    }
    if ("cache_salt".equals(type) && salt != null) {
      return new EngineEvent.SaltKey(salt);
    }
    if ("mm".equals(type) && hash != null && offset != null) {
      return new EngineEvent.MediaKey(hash, offset);
    }
    if ("legacy".equals(type) && legacy != null) {
      return legacy;
    }
    return new EngineEvent.OpaqueKey("tagged " + type);
  }
}
