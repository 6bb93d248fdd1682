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
 * <p>LoRA adapters enter every block's key through {@link ExtraKeys}; cache salts and multimodal
 * hashes are not carried by engine events, so blocks stored under them are keyed as plain.
 */
public final class TrackerRouterKeys implements RouterKeyFunction {

  private final String model;
  private final Map<Integer, BlockKeys> bySize = new ConcurrentHashMap<>();

  public TrackerRouterKeys(String model) {
    this.model = model;
  }

  @Override
  public long[] keys(long parentRouterKey, int[] tokenIds, int blockSize, String loraName) {
    BlockKeys keys = bySize.computeIfAbsent(blockSize, size -> BlockKeys.of(model, size));
    ExtraKeys extras = loraName == null ? ExtraKeys.NONE : ExtraKeys.of(loraName, null);
    int blocks = tokenIds.length / blockSize;
    long[] out = new long[blocks];
    long parent = parentRouterKey;
    for (int i = 0; i < blocks; i++) {
      long extra = extras.isEmpty() ? 0L : extras.blockExtra(i, blockSize);
      parent = keys.chain(parent, tokenIds, i * blockSize, extra);
      out[i] = parent;
    }
    return out;
  }
}
