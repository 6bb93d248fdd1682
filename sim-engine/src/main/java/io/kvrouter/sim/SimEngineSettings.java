package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EventEncoding;
import io.kvrouter.protocol.engine.ReplayLayout;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

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
 * @param dpSize data-parallel ranks behind the one HTTP port, each with its own core, cache,
 *     scheduler and KV-event publisher (at the endpoints' ports plus the rank, as vLLM binds them);
 *     {@code dpRank} is the first rank's number
 * @param transfer how fast KV arrives from a prefill engine (disaggregation)
 * @param loraModules LoRA adapters served from the start, name to path in listing order (vLLM's
 *     {@code --lora-modules name=path}); more can be loaded at run time ({@link SimAdapters})
 * @param images how an image in a chat request becomes placeholder tokens and which identifier it
 *     is hashed under ({@link MediaPrompt.Settings#DEFAULTS} by default; the ingress must use the
 *     same per model, {@code kvrouter.models.<name>.images})
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
    SimApis apis,
    int dpSize,
    SimKvTransfer transfer,
    Map<String, String> loraModules,
    MediaPrompt.Settings images) {

  public SimEngineSettings {
    images = images == null ? MediaPrompt.Settings.DEFAULTS : images;
    loraModules =
        loraModules == null
            ? Map.of()
            : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(loraModules));
    if (dpSize < 1) {
      throw new IllegalArgumentException("dpSize must be >= 1, was " + dpSize);
    }
    java.util.Objects.requireNonNull(transfer, "transfer");
  }

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
        SimApis.vllm(),
        1,
        SimKvTransfer.defaults(),
        Map.of(),
        MediaPrompt.Settings.DEFAULTS);
  }

  /**
   * The same settings on another address: HTTP, KV events and replay bind there, and replicas are
   * announced with it, so it must be an address other hosts reach (e.g. the host's own IP).
   */
  public SimEngineSettings withHost(String h) {
    String kv = kvEventsEndpoint.replace("//" + host + ":", "//" + h + ":");
    String rp = replayEndpoint.replace("//" + host + ":", "//" + h + ":");
    return with(
        b -> {
          b.host = h;
          b.kvEventsEndpoint = kv;
          b.replayEndpoint = rp;
        });
  }

  public SimEngineSettings withEngine(SimEngineConfig c) {
    return with(b -> b.engine = c);
  }

  public SimEngineSettings withEndpoints(int port, String kvEvents, String replay) {
    return with(
        b -> {
          b.httpPort = port;
          b.kvEventsEndpoint = kvEvents;
          b.replayEndpoint = replay;
        });
  }

  public SimEngineSettings withModel(String m) {
    return with(b -> b.model = m);
  }

  public SimEngineSettings withEncoding(EventEncoding e, ReplayLayout l) {
    return with(
        b -> {
          b.encoding = e;
          b.replayLayout = l;
        });
  }

  /** The same engine tokenizing with {@code t} (e.g. the router's tokenizer for the model). */
  public SimEngineSettings withTokenizer(SimTokenizer t) {
    return with(b -> b.tokenizer = t);
  }

  /** The same engine serving {@code a}. */
  public SimEngineSettings withApis(SimApis a) {
    return with(b -> b.apis = a);
  }

  /** The same engine with {@code size} data-parallel ranks, the first numbered {@code first}. */
  public SimEngineSettings withDataParallel(int first, int size) {
    return with(
        b -> {
          b.dpRank = first;
          b.dpSize = size;
        });
  }

  /** The same engine receiving transferred KV at {@code t}'s speed. */
  public SimEngineSettings withTransfer(SimKvTransfer t) {
    return with(b -> b.transfer = t);
  }

  /** The same engine serving the LoRA adapters {@code modules} (name to path) from the start. */
  public SimEngineSettings withLoraModules(Map<String, String> modules) {
    return with(b -> b.loraModules = modules);
  }

  /** The same engine expanding and naming images as {@code s} says. */
  public SimEngineSettings withImages(MediaPrompt.Settings s) {
    return with(b -> b.images = s);
  }

  /** Returns a copy with {@code change} applied to the builder of its components. */
  private SimEngineSettings with(Consumer<Builder> change) {
    Builder b = new Builder(this);
    change.accept(b);
    return b.build();
  }

  /** The components of a {@link SimEngineSettings} to change one or a few, as the withers do. */
  private static final class Builder {
    private String host;
    private int httpPort;
    private String model;
    private String kvEventsEndpoint;
    private String replayEndpoint;
    private String topic;
    private EventEncoding encoding;
    private ReplayLayout replayLayout;
    private int bufferSteps;
    private int dpRank;
    private SimEngineConfig engine;
    private SimTokenizer tokenizer;
    private SimApis apis;
    private int dpSize;
    private SimKvTransfer transfer;
    private Map<String, String> loraModules;
    private MediaPrompt.Settings images;

    private Builder(SimEngineSettings c) {
      host = c.host;
      httpPort = c.httpPort;
      model = c.model;
      kvEventsEndpoint = c.kvEventsEndpoint;
      replayEndpoint = c.replayEndpoint;
      topic = c.topic;
      encoding = c.encoding;
      replayLayout = c.replayLayout;
      bufferSteps = c.bufferSteps;
      dpRank = c.dpRank;
      engine = c.engine;
      tokenizer = c.tokenizer;
      apis = c.apis;
      dpSize = c.dpSize;
      transfer = c.transfer;
      loraModules = c.loraModules;
      images = c.images;
    }

    private SimEngineSettings build() {
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
          apis,
          dpSize,
          transfer,
          loraModules,
          images);
    }
  }
}
