package io.kvrouter.sim;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One running real-time simulated vLLM replica: one {@link RealTimeEngine} and {@link
 * KvEventPublisher} per data-parallel rank, behind one {@link SimHttpServer}. Start with {@link
 * #start(SimEngineSettings)}; close to stop all three (an engine "crash" as far as clients and the
 * agent can tell).
 */
public final class SimEngine implements AutoCloseable {

  private final SimEngineSettings settings;
  private final List<KvEventPublisher> publishers;
  private final List<RealTimeEngine> engines;
  private final SimHttpServer http;

  private SimEngine(
      SimEngineSettings settings,
      List<KvEventPublisher> publishers,
      List<RealTimeEngine> engines,
      SimHttpServer http) {
    this.settings = settings;
    this.publishers = publishers;
    this.engines = engines;
    this.http = http;
  }

  /**
   * Binds everything and starts serving; fails if a port is taken. With {@code dpSize} ranks, rank
   * {@code r} publishes at the configured KV-event and replay ports plus {@code r} (any free port
   * when the port is {@code *}), as vLLM binds them.
   */
  public static SimEngine start(SimEngineSettings s) throws IOException {
    List<KvEventPublisher> pubs = new ArrayList<>();
    List<RealTimeEngine> engines = new ArrayList<>();
    try {
      for (int k = 0; k < s.dpSize(); k++) {
        int rank = s.dpRank() + k;
        KvEventPublisher pub = null;
        if (s.kvEventsEndpoint() != null) {
          pub =
              new KvEventPublisher(
                      offset(s.kvEventsEndpoint(), k),
                      s.replayEndpoint() == null ? null : offset(s.replayEndpoint(), k),
                      s.topic(),
                      s.encoding(),
                      s.replayLayout(),
                      s.bufferSteps())
                  .start();
        }
        pubs.add(pub);
        engines.add(new RealTimeEngine(s.engine(), pub, rank).start());
      }
      SimHttpServer http =
          new SimHttpServer(
              s.host(),
              s.httpPort(),
              s.model(),
              engines,
              s.tokenizer(),
              s.apis(),
              s.transfer(),
              s.loraModules(),
              s.images());
      return new SimEngine(
          s, java.util.Collections.unmodifiableList(pubs), List.copyOf(engines), http);
    } catch (IOException | RuntimeException e) {
      engines.forEach(RealTimeEngine::close);
      pubs.stream().filter(java.util.Objects::nonNull).forEach(KvEventPublisher::close);
      throw e;
    }
  }

  /** {@code endpoint} with its port plus {@code k}; a {@code *} port stays any free port. */
  private static String offset(String endpoint, int k) {
    if (k == 0 || endpoint.endsWith(":*")) {
      return endpoint;
    }
    int colon = endpoint.lastIndexOf(':');
    return endpoint.substring(0, colon + 1) + (Integer.parseInt(endpoint.substring(colon + 1)) + k);
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

  /** Data-parallel ranks behind the port. */
  public int ranks() {
    return engines.size();
  }

  /** The bound PUB endpoint (of the first rank), or null without KV events. */
  public String kvEventsEndpoint() {
    return kvEventsEndpoint(0);
  }

  /** The bound replay endpoint (of the first rank), or null. */
  public String replayEndpoint() {
    return replayEndpoint(0);
  }

  /** The bound PUB endpoint of the {@code k}-th rank, or null without KV events. */
  public String kvEventsEndpoint(int k) {
    return publishers.get(k) == null ? null : publishers.get(k).pubEndpoint();
  }

  /** The bound replay endpoint of the {@code k}-th rank, or null. */
  public String replayEndpoint(int k) {
    return publishers.get(k) == null ? null : publishers.get(k).replayEndpoint();
  }

  /** The (first rank's) engine. */
  public RealTimeEngine engine() {
    return engines.get(0);
  }

  /** The {@code k}-th rank's engine. */
  public RealTimeEngine engine(int k) {
    return engines.get(k);
  }

  /** The (first rank's) publisher (tests use its {@code dropNextLive} to force a gap), or null. */
  public KvEventPublisher publisher() {
    return publishers.get(0);
  }

  /** The engine hashes of all cached blocks (of the first rank), read on the engine thread. */
  public long[] cachedBlockHashes() {
    try {
      return engine().query(SimEngineCore::cachedBlockHashes).get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("engine did not answer", e);
    }
  }

  @Override
  public void close() {
    http.close();
    engines.forEach(RealTimeEngine::close);
    publishers.stream().filter(java.util.Objects::nonNull).forEach(KvEventPublisher::close);
  }
}
