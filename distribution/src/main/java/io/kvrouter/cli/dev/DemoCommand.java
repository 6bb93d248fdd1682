package io.kvrouter.cli.dev;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kvrouter demo}: a whole kvrouter cluster in one process, until interrupted. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description =
        "Run a whole kvrouter cluster in one process: 2 ingress nodes (HTTP 8080, 8081) and 4"
            + " simulated vLLM engines (HTTP 8000-8003, ZMQ KV events from 5557) with their agent,"
            + " until interrupted.")
final class DemoCommand implements Callable<Integer> {

  @Option(
      names = "--ingresses",
      defaultValue = "2",
      description = "Ingress nodes (default: ${DEFAULT-VALUE}).")
  int ingresses;

  @Option(
      names = "--ingress-port",
      defaultValue = "8080",
      description = "HTTP port of the first ingress, then +1 each (default: ${DEFAULT-VALUE}).")
  int ingressPort;

  @Option(
      names = "--engines",
      defaultValue = "4",
      description = "Simulated engines (default: ${DEFAULT-VALUE}).")
  int engines;

  @Option(
      names = "--engine-port",
      defaultValue = "8000",
      description = "HTTP port of the first engine, then +1 each (default: ${DEFAULT-VALUE}).")
  int enginePort;

  @Option(
      names = "--kv-events-port",
      defaultValue = "5557",
      description =
          "ZMQ KV-event port of the first engine (replay +1, next engine +2; default: ${DEFAULT-VALUE}).")
  int kvEventsPort;

  @Option(
      names = "--host",
      defaultValue = "127.0.0.1",
      description = "Interface the HTTP servers bind (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(
      names = "--model",
      defaultValue = "kvrouter-demo",
      description =
          "Model the engines serve; its tokenizer comes from kvrouter.models (default: ${DEFAULT-VALUE}).")
  String model;

  @Option(
      names = "--policy",
      defaultValue = "kvrouter",
      description =
          "Routing policy of every ingress (default: ${DEFAULT-VALUE}; see `kvrouter lab --help`).")
  String policy;

  @Option(
      names = "--prefill",
      defaultValue = "0",
      description =
          "Prefill engines of a disaggregated cluster (with --decode; replaces --engines; default:"
              + " ${DEFAULT-VALUE}, no disaggregation).")
  int prefill;

  @Option(
      names = "--decode",
      defaultValue = "0",
      description = "Decode engines of a disaggregated cluster (with --prefill).")
  int decode;

  @Option(
      names = "--dp-size",
      defaultValue = "1",
      description =
          "Data-parallel ranks of every engine, behind its one HTTP port (default:"
              + " ${DEFAULT-VALUE}).")
  int dpSize;

  /** The shape and speed of every simulated engine. */
  @Mixin SimEngineOptions engine;

  @Override
  public Integer call() throws Exception {
    DemoOptions options =
        new DemoOptions(
            ingresses,
            ingressPort,
            host,
            engines,
            enginePort,
            kvEventsPort,
            model,
            policy,
            engine.config());
    if (prefill > 0 || decode > 0) {
      if (prefill < 1 || decode < 1) {
        System.err.println("kvrouter demo: --prefill and --decode go together, each at least 1");
        return 2;
      }
      options = options.withDisaggregation(prefill, decode);
    }
    options = options.withDataParallel(dpSize);
    if (!engine.loraModules().isEmpty()) {
      System.err.println(
          "kvrouter demo: --lora-modules is for sim-engine and agent --sim; load an adapter on a"
              + " demo engine with POST /v1/load_lora_adapter");
      return 2;
    }
    DemoCluster cluster =
        DemoCluster.start(
            options,
            DemoCluster.DEMO_APIS.withRuntimeLora(engine.runtimeLora(true)),
            engine.transfer());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  cluster.close();
                  stopped.countDown();
                },
                "kvrouter-demo-shutdown"));
    for (int i = 0; i < cluster.engineUrls().size(); i++) {
      System.out.println(
          "kvrouter demo: engine sim-"
              + i
              + "   "
              + cluster.engineUrls().get(i)
              + "   "
              + options.role(i)
              + (dpSize > 1 ? ", " + dpSize + " data-parallel ranks" : ""));
    }
    for (String url : cluster.ingressUrls()) {
      System.out.println(
          "kvrouter demo: ingress        " + url + "   (dashboard " + url + "/dashboard)");
    }
    cluster.awaitReady(Duration.ofSeconds(60));
    System.out.println(
        "kvrouter demo ready: "
            + ingresses
            + " ingresses, "
            + options.engines()
            + " engines, model "
            + model
            + ". Try: curl "
            + cluster.ingressUrls().get(0)
            + "/v1/chat/completions -H 'Content-Type:"
            + " application/json' -d '{\"model\":\""
            + model
            + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'");
    System.out.flush();
    stopped.await();
    return 0;
  }
}
