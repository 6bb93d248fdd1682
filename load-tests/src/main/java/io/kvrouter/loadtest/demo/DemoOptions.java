package io.kvrouter.loadtest.demo;

import io.kvrouter.agent.sim.MockerTimingModel;
import io.kvrouter.agent.sim.SimEngineConfig;

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
    int mismatchedBlockSize) {

  public DemoOptions {
    if (ingresses < 1 || engines < 1) {
      throw new IllegalArgumentException("a demo needs at least one ingress and one engine");
    }
    if (mismatchedBlockSize < 0 || (mismatchedBlockSize > 0 && engines < 2)) {
      throw new IllegalArgumentException(
          "mismatchedBlockSize must be 0, or positive with at least two engines; got "
              + mismatchedBlockSize);
    }
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
    return new DemoOptions(
        ingresses, 0, host, engines, 0, 0, model, policy, engine, mismatchedBlockSize);
  }

  public DemoOptions withPolicy(String p) {
    return new DemoOptions(
        ingresses,
        ingressPort,
        host,
        engines,
        enginePort,
        kvEventsPort,
        model,
        p,
        engine,
        mismatchedBlockSize);
  }

  public DemoOptions withCounts(int ingressCount, int engineCount) {
    return new DemoOptions(
        ingressCount,
        ingressPort,
        host,
        engineCount,
        enginePort,
        kvEventsPort,
        model,
        policy,
        engine,
        mismatchedBlockSize);
  }

  /** The same with the engines' timing model sped up {@code s} times. */
  public DemoOptions withSpeedup(double s) {
    return new DemoOptions(
        ingresses,
        ingressPort,
        host,
        engines,
        enginePort,
        kvEventsPort,
        model,
        policy,
        engine.withTiming(new MockerTimingModel(s)),
        mismatchedBlockSize);
  }

  /**
   * The same with the last engine's KV block size set to {@code blockSize} behind the router's
   * back.
   */
  public DemoOptions withMismatchedBlockSize(int blockSize) {
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
        blockSize);
  }
}
