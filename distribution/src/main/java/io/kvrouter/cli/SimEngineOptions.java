package io.kvrouter.cli;

import io.kvrouter.agent.sim.MockerTimingModel;
import io.kvrouter.agent.sim.SimEngineConfig;
import picocli.CommandLine.Option;

/**
 * The shape and speed of a simulated engine, the same options wherever a command starts some
 * ({@code sim-engine}, {@code agent --sim}, {@code demo}); defaults are {@link
 * SimEngineConfig#defaults()}'s.
 */
final class SimEngineOptions {

  private static final SimEngineConfig DEFAULTS = SimEngineConfig.defaults();

  @Option(
      names = "--num-blocks",
      description =
          "KV cache capacity of a simulated engine, in blocks (default: ${DEFAULT-VALUE}).")
  int numBlocks = DEFAULTS.numBlocks();

  @Option(
      names = "--max-num-seqs",
      description = "Running requests of a simulated engine at most (default: ${DEFAULT-VALUE}).")
  int maxNumSeqs = DEFAULTS.maxNumSeqs();

  @Option(
      names = "--max-num-batched-tokens",
      description =
          "Tokens per scheduler pass of a simulated engine at most (default: ${DEFAULT-VALUE}).")
  int maxNumBatchedTokens = DEFAULTS.maxNumBatchedTokens();

  @Option(
      names = "--speedup",
      description =
          "Divides every pass time of the Dynamo mocker timing model (default: ${DEFAULT-VALUE}).")
  double speedup = 1.0;

  @Option(
      names = "--hash-seed",
      description =
          "PYTHONHASHSEED-like seed of the engine's sha256_cbor block hashes (default: ${DEFAULT-VALUE}).")
  String hashSeed = DEFAULTS.hashSeed();

  /** The engine these options describe, with the default block size. */
  SimEngineConfig config() {
    return config(DEFAULTS.blockSize());
  }

  /** The engine these options describe, with {@code blockSize}-token blocks. */
  SimEngineConfig config(int blockSize) {
    return new SimEngineConfig(
        blockSize,
        numBlocks,
        maxNumSeqs,
        maxNumBatchedTokens,
        hashSeed,
        new MockerTimingModel(speedup));
  }
}
