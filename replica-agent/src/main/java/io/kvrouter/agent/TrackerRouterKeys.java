package io.kvrouter.agent;

import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The router's block-key function ({@link BlockKeys} of the wire protocol), as the agent uses it to
 * turn the token ids of an engine's BlockStored into router keys. It must be the very function the
 * ingress hashes prompts with, or no prompt would ever match a stored block.
 *
 * <p>Each block's extra key (LoRA adapter, cache salt, multimodal items) comes from the engine's
 * event through {@link EngineExtraKeys}, and equals what {@link ExtraKeys#blockExtra} gives the
 * request on the ingress side.
 */
public final class TrackerRouterKeys implements RouterKeyFunction {

  private final String model;
  private final Map<Integer, BlockKeys> bySize = new ConcurrentHashMap<>();

  public TrackerRouterKeys(String model) {
    this.model = model;
  }

  @Override
  public long[] chain(long parentRouterKey, int[] tokenIds, int blockSize, long[] blockExtras) {
    BlockKeys keys = bySize.computeIfAbsent(blockSize, size -> BlockKeys.of(model, size));
    int blocks = tokenIds.length / blockSize;
    long[] out = new long[blocks];
    long parent = parentRouterKey;
    for (int i = 0; i < blocks; i++) {
      long extra = blockExtras == null ? 0L : blockExtras[i];
      parent = keys.chain(parent, tokenIds, i * blockSize, extra);
      out[i] = parent;
    }
    return out;
  }
}
