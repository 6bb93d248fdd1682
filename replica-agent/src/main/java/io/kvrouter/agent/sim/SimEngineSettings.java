package io.kvrouter.agent.sim;

import io.kvrouter.agent.kvevents.EventEncoding;
import io.kvrouter.agent.kvevents.ReplayLayout;

/**
 * How to run one real-time simulated engine ({@code kvrouter sim-engine}).
 *
 * @param host HTTP interface (127.0.0.1 by default)
 * @param httpPort HTTP port, 0 for any free one
 * @param model served model name
 * @param kvEventsEndpoint ZMQ PUB endpoint to bind (port {@code *} for any), or null for no KV
 *     events (an engine in approximate mode)
 * @param replayEndpoint ZMQ ROUTER endpoint to bind, or null for no replay
 * @param topic first frame of every KV-event message
 * @param encoding event encoding
 * @param replayLayout replay reply layout
 * @param bufferSteps batches kept for replay
 * @param dpRank data-parallel rank stamped on batches
 * @param engine the core's shape and timing
 * @param tokenizer how requests become token ids ({@link SimTokenizer#BYTES} by default)
 * @param apis which APIs beyond OpenAI chat and completions it serves ({@link SimApis#vllm()} by
 *     default)
 */
public record SimEngineSettings(
    String host,
    int httpPort,
    String model,
    String kvEventsEndpoint,
    String replayEndpoint,
    String topic,
    EventEncoding encoding,
    ReplayLayout replayLayout,
    int bufferSteps,
    int dpRank,
    SimEngineConfig engine,
    SimTokenizer tokenizer,
    SimApis apis) {

  /** Loopback, any ports, model "sim-model", map encoding, replay with topic, vLLM defaults. */
  public static SimEngineSettings loopback() {
    return new SimEngineSettings(
        "127.0.0.1",
        0,
        "sim-model",
        "tcp://127.0.0.1:*",
        "tcp://127.0.0.1:*",
        "",
        EventEncoding.MAP,
        ReplayLayout.WITH_TOPIC,
        10_000,
        0,
        SimEngineConfig.defaults(),
        SimTokenizer.BYTES,
        SimApis.vllm());
  }

  /**
   * The same settings on another address: HTTP, KV events and replay bind there, and replicas are
   * announced with it, so it must be an address other hosts reach (e.g. the host's own IP).
   */
  public SimEngineSettings withHost(String h) {
    String kv = kvEventsEndpoint.replace("//" + host + ":", "//" + h + ":");
    String rp = replayEndpoint.replace("//" + host + ":", "//" + h + ":");
    return new SimEngineSettings(
        h,
        httpPort,
        model,
        kv,
        rp,
        topic,
        encoding,
        replayLayout,
        bufferSteps,
        dpRank,
        engine,
        tokenizer,
        apis);
  }

  public SimEngineSettings withEngine(SimEngineConfig c) {
    return new SimEngineSettings(
        host,
        httpPort,
        model,
        kvEventsEndpoint,
        replayEndpoint,
        topic,
        encoding,
        replayLayout,
        bufferSteps,
        dpRank,
        c,
        tokenizer,
        apis);
  }

  public SimEngineSettings withEndpoints(int port, String kvEvents, String replay) {
    return new SimEngineSettings(
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
        engine,
        tokenizer,
        apis);
  }

  public SimEngineSettings withModel(String m) {
    return new SimEngineSettings(
        host,
        httpPort,
        m,
        kvEventsEndpoint,
        replayEndpoint,
        topic,
        encoding,
        replayLayout,
        bufferSteps,
        dpRank,
        engine,
        tokenizer,
        apis);
  }

  public SimEngineSettings withEncoding(EventEncoding e, ReplayLayout l) {
    return new SimEngineSettings(
        host,
        httpPort,
        model,
        kvEventsEndpoint,
        replayEndpoint,
        topic,
        e,
        l,
        bufferSteps,
        dpRank,
        engine,
        tokenizer,
        apis);
  }

  /** The same engine tokenizing with {@code t} (e.g. the router's tokenizer for the model). */
  public SimEngineSettings withTokenizer(SimTokenizer t) {
    return new SimEngineSettings(
        host,
        httpPort,
        model,
        kvEventsEndpoint,
        replayEndpoint,
        topic,
        encoding,
        replayLayout,
        bufferSteps,
        dpRank,
        engine,
        t,
        apis);
  }

  /** The same engine serving {@code a}. */
  public SimEngineSettings withApis(SimApis a) {
    return new SimEngineSettings(
        host,
        httpPort,
        model,
        kvEventsEndpoint,
        replayEndpoint,
        topic,
        encoding,
        replayLayout,
        bufferSteps,
        dpRank,
        engine,
        tokenizer,
        a);
  }
}
