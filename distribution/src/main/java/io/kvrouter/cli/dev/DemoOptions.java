package io.kvrouter.cli.dev;

import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngineConfig;
import java.util.function.Consumer;

/**
 * The shape of an in-process demo cluster.
 *
 * @param ingresses ingress nodes
 * @param ingressPort HTTP port of ingress 0 (then +1 each); 0 picks free ports
 * @param host interface every HTTP server binds (loopback by default)
 * @param engines simulated engines (one agent node serves them all)
 * @param enginePort HTTP port of engine 0 (then +1 each); 0 picks free ports
 * @param kvEventsPort ZMQ KV-event port of engine 0 (replay +1, next engine +2); 0 picks free
 * @param model the model the engines serve (the router must know its tokenizer)
 * @param policy routing policy of every ingress's tracker
 * @param engine the shape and timing of every engine
 * @param mismatchedBlockSize 0 normally; otherwise the last engine runs with this KV block size
 *     while its replica is still declared with the default one, a deliberate silent
 *     misconfiguration that the index-accuracy check must flag
 * @param prefillEngines 0 for engines that prefill and decode (role {@code both}); otherwise the
 *     first this many engines are prefill replicas and the others decode replicas
 * @param dpSize data-parallel ranks of every engine (each rank a replica)
 */
public record DemoOptions(
    int ingresses,
    int ingressPort,
    String host,
    int engines,
    int enginePort,
    int kvEventsPort,
    String model,
    String policy,
    SimEngineConfig engine,
    int mismatchedBlockSize,
    int prefillEngines,
    int dpSize) {

  public DemoOptions {
    if (ingresses < 1 || engines < 1) {
      throw new IllegalArgumentException("a demo needs at least one ingress and one engine");
    }
    if (mismatchedBlockSize < 0 || (mismatchedBlockSize > 0 && engines < 2)) {
      throw new IllegalArgumentException(
          "mismatchedBlockSize must be 0, or positive with at least two engines; got "
              + mismatchedBlockSize);
    }
    if (prefillEngines < 0 || (prefillEngines > 0 && prefillEngines >= engines) || dpSize < 1) {
      throw new IllegalArgumentException(
          "a disaggregated demo needs prefill and decode engines, and dpSize >= 1; got "
              + prefillEngines
              + " prefill of "
              + engines
              + ", dpSize "
              + dpSize);
    }
  }

  /** The shape without disaggregation or data parallelism. */
  public DemoOptions(
      int ingresses,
      int ingressPort,
      String host,
      int engines,
      int enginePort,
      int kvEventsPort,
      String model,
      String policy,
      SimEngineConfig engine,
      int mismatchedBlockSize) {
    this(
        ingresses,
        ingressPort,
        host,
        engines,
        enginePort,
        kvEventsPort,
        model,
        policy,
        engine,
        mismatchedBlockSize,
        0,
        1);
  }

  /** Replicas the ingresses must know: one per engine rank. */
  public int replicas() {
    return engines * dpSize;
  }

  /** The role of engine {@code i}. */
  public String role(int i) {
    if (prefillEngines == 0) {
      return "both";
    }
    return i < prefillEngines ? "prefill" : "decode";
  }

  /** The same with {@code prefill} prefill engines and {@code decode} decode engines. */
  public DemoOptions withDisaggregation(int prefill, int decode) {
    return with(
        b -> {
          b.engines = prefill + decode;
          b.prefillEngines = prefill;
        });
  }

  /** The same with {@code size} data-parallel ranks per engine. */
  public DemoOptions withDataParallel(int size) {
    return with(b -> b.dpSize = size);
  }

  /** The shape without a mismatched engine. */
  public DemoOptions(
      int ingresses,
      int ingressPort,
      String host,
      int engines,
      int enginePort,
      int kvEventsPort,
      String model,
      String policy,
      SimEngineConfig engine) {
    this(ingresses, ingressPort, host, engines, enginePort, kvEventsPort, model, policy, engine, 0);
  }

  /** The documented default: 2 ingresses on 8080-8081, 4 engines on 8000-8003. */
  public static DemoOptions defaults() {
    return new DemoOptions(
        2,
        8080,
        "127.0.0.1",
        4,
        8000,
        5557,
        "kvrouter-demo",
        "kvrouter",
        SimEngineConfig.defaults());
  }

  /** The same on free ports (tests). */
  public DemoOptions onFreePorts() {
    return with(
        b -> {
          b.ingressPort = 0;
          b.enginePort = 0;
          b.kvEventsPort = 0;
        });
  }

  public DemoOptions withPolicy(String p) {
    return with(b -> b.policy = p);
  }

  public DemoOptions withCounts(int ingressCount, int engineCount) {
    return with(
        b -> {
          b.ingresses = ingressCount;
          b.engines = engineCount;
        });
  }

  /** The same with the engines' timing model sped up {@code s} times. */
  public DemoOptions withSpeedup(double s) {
    return with(b -> b.engine = engine.withTiming(new MockerTimingModel(s)));
  }

  /**
   * The same with the last engine's KV block size set to {@code blockSize} behind the router's
   * back.
   */
  public DemoOptions withMismatchedBlockSize(int blockSize) {
    return with(b -> b.mismatchedBlockSize = blockSize);
  }

  /** Returns a copy with {@code change} applied to the builder of its components. */
  private DemoOptions with(Consumer<Builder> change) {
    Builder b = new Builder(this);
    change.accept(b);
    return b.build();
  }

  /** The components of a {@link DemoOptions} to change one or a few, as the withers do. */
  private static final class Builder {
    private int ingresses;
    private int ingressPort;
    private String host;
    private int engines;
    private int enginePort;
    private int kvEventsPort;
    private String model;
    private String policy;
    private SimEngineConfig engine;
    private int mismatchedBlockSize;
    private int prefillEngines;
    private int dpSize;

    private Builder(DemoOptions c) {
      ingresses = c.ingresses;
      ingressPort = c.ingressPort;
      host = c.host;
      engines = c.engines;
      enginePort = c.enginePort;
      kvEventsPort = c.kvEventsPort;
      model = c.model;
      policy = c.policy;
      engine = c.engine;
      mismatchedBlockSize = c.mismatchedBlockSize;
      prefillEngines = c.prefillEngines;
      dpSize = c.dpSize;
    }

    private DemoOptions build() {
      return new DemoOptions(
          ingresses,
          ingressPort,
          host,
          engines,
          enginePort,
          kvEventsPort,
          model,
          policy,
          engine,
          mismatchedBlockSize,
          prefillEngines,
          dpSize);
    }
  }
}
