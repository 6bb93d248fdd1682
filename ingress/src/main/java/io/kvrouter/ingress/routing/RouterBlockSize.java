package io.kvrouter.ingress.routing;

import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.keys.BlockKeys;
import java.util.function.ToIntFunction;

/**
 * The block size this ingress keys a model's prompts with: the model's {@code
 * kvrouter.models."m".block-size} when it has a tokenizer entry, else what its replicas announce,
 * else {@link BlockKeys#DEFAULT_BLOCK_SIZE}. Thread-safe (reads the directory's current view).
 */
public final class RouterBlockSize implements ToIntFunction<String> {

  private final TokenizerRegistry tokenizers;
  private final ReplicaDirectory directory;

  public RouterBlockSize(TokenizerRegistry tokenizers, ReplicaDirectory directory) {
    this.tokenizers = tokenizers;
    this.directory = directory;
  }

  @Override
  public int applyAsInt(String model) {
    return tokenizers
        .find(model)
        .map(t -> t.blockSize())
        .orElseGet(() -> directory.blockSize(model, BlockKeys.DEFAULT_BLOCK_SIZE));
  }
}
