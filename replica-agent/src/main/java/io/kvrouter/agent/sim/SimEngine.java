package io.kvrouter.agent.sim;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * One running real-time simulated vLLM replica: {@link RealTimeEngine} + {@link KvEventPublisher} +
 * {@link SimHttpServer}. Start with {@link #start(SimEngineSettings)}; close to stop all three (an
 * engine "crash" as far as clients and the agent can tell).
 */
public final class SimEngine implements AutoCloseable {

  private final SimEngineSettings settings;
  private final KvEventPublisher publisher;
  private final RealTimeEngine engine;
  private final SimHttpServer http;

  private SimEngine(
      SimEngineSettings settings,
      KvEventPublisher publisher,
      RealTimeEngine engine,
      SimHttpServer http) {
    this.settings = settings;
    this.publisher = publisher;
    this.engine = engine;
    this.http = http;
  }

  /** Binds everything and starts serving; fails if a port is taken. */
  public static SimEngine start(SimEngineSettings s) throws IOException {
    KvEventPublisher pub = null;
    if (s.kvEventsEndpoint() != null) {
      pub =
          new KvEventPublisher(
                  s.kvEventsEndpoint(),
                  s.replayEndpoint(),
                  s.topic(),
                  s.encoding(),
                  s.replayLayout(),
                  s.bufferSteps())
              .start();
    }
    RealTimeEngine engine = new RealTimeEngine(s.engine(), pub, s.dpRank()).start();
    try {
      SimHttpServer http =
          new SimHttpServer(s.host(), s.httpPort(), s.model(), engine, s.tokenizer(), s.apis());
      return new SimEngine(s, pub, engine, http);
    } catch (IOException | RuntimeException e) {
      engine.close();
      if (pub != null) {
        pub.close();
      }
      throw e;
    }
  }

  public SimEngineSettings settings() {
    return settings;
  }

  /** e.g. {@code http://127.0.0.1:8000}. */
  public String baseUrl() {
    return "http://" + settings.host() + ":" + http.port();
  }

  public int httpPort() {
    return http.port();
  }

  /** The bound PUB endpoint, or null without KV events. */
  public String kvEventsEndpoint() {
    return publisher == null ? null : publisher.pubEndpoint();
  }

  /** The bound replay endpoint, or null. */
  public String replayEndpoint() {
    return publisher == null ? null : publisher.replayEndpoint();
  }

  public RealTimeEngine engine() {
    return engine;
  }

  /** The publisher (tests use its {@code dropNextLive} to force a gap), or null. */
  public KvEventPublisher publisher() {
    return publisher;
  }

  /** The engine hashes of all cached blocks, read on the engine thread. */
  public long[] cachedBlockHashes() {
    try {
      return engine.query(SimEngineCore::cachedBlockHashes).get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("engine did not answer", e);
    }
  }

  @Override
  public void close() {
    http.close();
    engine.close();
    if (publisher != null) {
      publisher.close();
    }
  }
}
