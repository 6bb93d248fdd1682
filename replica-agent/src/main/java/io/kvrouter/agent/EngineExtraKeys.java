package io.kvrouter.agent;

import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.keys.ExtraKeys;
import java.util.List;

/**
 * The per-block extra keys of an engine's {@code BlockStored}, in the router's terms: for each
 * block, {@link ExtraKeys#engineBlockExtra} of the adapter, salt and multimodal items the engine
 * hashed into it, which equals {@link ExtraKeys#blockExtra} of the client's request on the ingress
 * side.
 *
 * <p>How vLLM fills {@code extra_keys} ({@code generate_block_hash_extra_keys} in vllm-project/vllm
 * {@code vllm/v1/core/kv_cache_utils.py} at 001cabc1): per block the tuple {@code lora_name + mm
 * items + cache_salt + prompt-embedding hashes}, where the adapter name and the salt are bare
 * strings, the salt only on the sequence's first block, and a multimodal item is {@code
 * (identifier, item offset - block start)}. A bare string is therefore the adapter when it is the
 * first string and equals the event's {@code lora_name}, and the salt otherwise; newer tagged items
 * say which they are. A prompt-embedding hash, or any item we cannot read, makes the run unkeyable:
 * a request can never carry the same embeddings, and a wrong key is worse than none.
 *
 * <p>Events without {@code extra_keys} (vLLM before the field, SGLang) key their blocks with the
 * adapter only, as before. Stateless.
 */
final class EngineExtraKeys {

  private EngineExtraKeys() {}

  /**
   * The extra key of each of the event's {@code blocks} blocks; null when none has any (the plain
   * case); throws nothing but returns {@link #UNKEYABLE} when the run cannot be keyed.
   */
  static long[] of(EngineEvent.BlockStored s, int blocks) {
    List<List<EngineEvent.ExtraKey>> perBlock = s.extraKeys();
    if (perBlock == null) {
      if (s.loraName() == null) {
        return null;
      }
      long[] out = new long[blocks];
      java.util.Arrays.fill(out, ExtraKeys.engineBlockExtra(s.loraName(), null, null, null, 0));
      return out;
    }
    if (perBlock.size() != blocks) {
      return UNKEYABLE;
    }
    long[] out = new long[blocks];
    boolean any = false;
    for (int b = 0; b < blocks; b++) {
      List<EngineEvent.ExtraKey> items = perBlock.get(b);
      if (items.isEmpty()) {
        continue;
      }
      String lora = null;
      String salt = null;
      long[] media = new long[items.size()];
      long[] starts = new long[items.size()];
      int mediaCount = 0;
      for (EngineEvent.ExtraKey k : items) {
        if (k instanceof EngineEvent.LoraKey l) {
          lora = l.name();
        } else if (k instanceof EngineEvent.SaltKey sk) {
          salt = sk.salt();
        } else if (k instanceof EngineEvent.TextKey t) {
          if (lora == null && salt == null && mediaCount == 0 && t.value().equals(s.loraName())) {
            lora = t.value();
          } else {
            salt = t.value();
          }
        } else if (k instanceof EngineEvent.MediaKey m) {
          media[mediaCount] = ExtraKeys.mediaItemHash(m.identifier());
          starts[mediaCount++] = m.offset();
        } else {
          return UNKEYABLE;
        }
      }
      out[b] = ExtraKeys.engineBlockExtra(lora, salt, media, starts, mediaCount);
      any = true;
    }
    return any ? out : null;
  }

  /** Marks a run whose blocks cannot be keyed (compare by identity). */
  static final long[] UNKEYABLE = new long[0];
}
