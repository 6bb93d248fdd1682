package io.kvrouter.cli.dev;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.engine.EventEncoding;
import io.kvrouter.protocol.engine.ReplayLayout;
import io.kvrouter.sim.SimApis;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.sim.SimTokenizer;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kvrouter sim-engine}. */
@Command(
    name = "sim-engine",
    mixinStandardHelpOptions = true,
    description =
        "Run one simulated vLLM engine: OpenAI HTTP API, prefix-cached paged KV cache, ZMQ KV events.")
final class SimEngineCommand implements Callable<Integer> {

  @Option(
      names = "--host",
      defaultValue = "127.0.0.1",
      description = "HTTP interface to bind (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(
      names = "--port",
      defaultValue = "8000",
      description = "HTTP port; 0 picks a free one (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(
      names = "--model",
      defaultValue = "kvrouter-demo",
      description = "Served model name (default: ${DEFAULT-VALUE}).")
  String model;

  @Option(
      names = "--kv-events",
      paramLabel = "ENDPOINT",
      description =
          "ZMQ PUB endpoint to bind for KV events, e.g. tcp://127.0.0.1:5557."
              + " Without it the engine publishes no KV events (approximate mode).")
  String kvEvents;

  @Option(
      names = "--replay",
      paramLabel = "ENDPOINT",
      description = "ZMQ ROUTER endpoint to bind for replay, e.g. tcp://127.0.0.1:5558.")
  String replay;

  @Option(
      names = "--topic",
      defaultValue = "",
      description = "Topic frame of every KV-event message (default: empty).")
  String topic;

  @Option(
      names = "--encoding",
      defaultValue = "MAP",
      description = "Event encoding: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  EventEncoding encoding;

  @Option(
      names = "--replay-layout",
      defaultValue = "WITH_TOPIC",
      description = "Replay reply layout: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  ReplayLayout replayLayout;

  @Option(
      names = "--buffer-steps",
      defaultValue = "10000",
      description = "KV-event batches kept for replay (default: ${DEFAULT-VALUE}).")
  int bufferSteps;

  @Option(
      names = "--block-size",
      defaultValue = "16",
      description = "Tokens per KV block (default: ${DEFAULT-VALUE}).")
  int blockSize;

  @Mixin SimEngineOptions engine;

  @Option(
      names = "--dp-rank",
      defaultValue = "0",
      description =
          "Data-parallel rank of the first engine core (vLLM's --data-parallel-start-rank;"
              + " default: ${DEFAULT-VALUE}).")
  int dpRank;

  @Option(
      names = "--dp-size",
      defaultValue = "1",
      description =
          "Data-parallel ranks behind the one HTTP port, each with its own cache and scheduler;"
              + " rank r publishes KV events on the --kv-events and --replay ports plus r, as vLLM"
              + " does (default: ${DEFAULT-VALUE}).")
  int dpSize;

  @Option(
      names = "--chat-only",
      description =
          "Serve only OpenAI completions and chat, not /v1/messages and /v1/responses (as an older"
              + " vLLM).")
  boolean chatOnly;

  @Option(
      names = "--responses-store",
      description =
          "Keep Responses API responses so previous_response_id finds them (vLLM's"
              + " VLLM_ENABLE_RESPONSES_API_STORE=1).")
  boolean responsesStore;

  @Override
  public Integer call() throws Exception {
    SimEngineConfig engineConfig = engine.config(blockSize);
    SimEngineSettings settings =
        new SimEngineSettings(
            host,
            port,
            model,
            kvEvents,
            replay,
            topic,
            encoding,
            replayLayout,
            bufferSteps,
            dpRank,
            engineConfig,
            SimTokenizer.BYTES,
            (chatOnly ? SimApis.chatOnly() : SimApis.vllm())
                .withResponsesStore(responsesStore)
                .withRuntimeLora(engine.runtimeLora(false)),
            dpSize,
            engine.transfer(),
            engine.loraModules(),
            engine.images());
    // Tokenize like the real model when kvrouter.models lists it (kvrouter-demo needs no files);
    // the registry lives as long as the engine.
    TokenizerRegistry registry = TokenizerRegistry.fromConfig(ConfigFactory.load());
    settings = settings.withTokenizer(ModelSimTokenizer.forModel(registry, model));
    SimEngine engine = SimEngine.start(settings);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  engine.close();
                  stopped.countDown();
                },
                "sim-engine-shutdown"));
    System.out.println(
        "kvrouter sim-engine: model "
            + model
            + " at "
            + engine.baseUrl()
            + (engine.kvEventsEndpoint() == null
                ? ", no KV events"
                : ", KV events " + engine.kvEventsEndpoint())
            + (engine.replayEndpoint() == null ? "" : ", replay " + engine.replayEndpoint())
            + (engine.ranks() > 1 ? ", " + engine.ranks() + " data-parallel ranks" : ""));
    System.out.flush();
    stopped.await();
    return 0;
  }
}
