package io.kvrouter.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code kvrouter sim-engine}. */
@Command(
    name = "sim-engine",
    mixinStandardHelpOptions = true,
    description = "Run one simulated vLLM engine: OpenAI HTTP API, prefix-cached paged KV cache, ZMQ KV events.")
final class SimEngineCommand implements Callable<Integer> {

  @Override
  public Integer call() {
    System.err.println("kvrouter sim-engine: not implemented yet");
    return 2;
  }
}
