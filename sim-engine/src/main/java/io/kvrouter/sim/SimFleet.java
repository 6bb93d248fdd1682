package io.kvrouter.sim;

import io.kvrouter.protocol.ReplicaInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * N simulated engines started in-process for {@code kvrouter agent --sim N}: engine {@code i}
 * serves HTTP on {@code httpBase + i} and publishes KV events on {@code zmqBase + 2i} with replay
 * on {@code zmqBase + 2i + 1} (a base of 0 picks free ports), as replica {@code <prefix>-i}.
 */
public final class SimFleet implements AutoCloseable {

  private final List<SimEngine> engines;
  private final List<SimReplica> specs;

  private SimFleet(List<SimEngine> engines, List<SimReplica> specs) {
    this.engines = List.copyOf(engines);
    this.specs = List.copyOf(specs);
  }

  /**
   * Starts the engines; on failure stops those already started.
   *
   * @param n how many
   * @param idPrefix replica id prefix, e.g. "sim"
   * @param httpBase first HTTP port, 0 for free ports
   * @param zmqBase first ZMQ port, 0 for free ports
   * @param template settings shared by all (host, model, engine shape, encoding)
   */
  public static SimFleet start(
      int n, String idPrefix, int httpBase, int zmqBase, SimEngineSettings template)
      throws IOException {
    return start(
        java.util.Collections.nCopies(n, ReplicaInfo.BOTH), idPrefix, httpBase, zmqBase, template);
  }

  /**
   * Starts one engine per entry of {@code roles}, each announced with that role; with {@code
   * template.dpSize()} ranks, engine {@code i} publishes rank {@code r}'s events on {@code zmqBase
   * + 2·dp·i + r} and its replay on {@code zmqBase + 2·dp·i + dp + r}, and serves one replica per
   * rank.
   */
  public static SimFleet start(
      List<String> roles, String idPrefix, int httpBase, int zmqBase, SimEngineSettings template)
      throws IOException {
    List<SimEngine> engines = new ArrayList<>();
    List<SimReplica> specs = new ArrayList<>();
    int dp = template.dpSize();
    try {
      for (int i = 0; i < roles.size(); i++) {
        String host = template.host();
        int first = zmqBase + 2 * dp * i;
        String pub = "tcp://" + host + ":" + (zmqBase == 0 ? "*" : String.valueOf(first));
        String replay = "tcp://" + host + ":" + (zmqBase == 0 ? "*" : String.valueOf(first + dp));
        SimEngine e =
            SimEngine.start(template.withEndpoints(httpBase == 0 ? 0 : httpBase + i, pub, replay));
        engines.add(e);
        for (int k = 0; k < e.ranks(); k++) {
          specs.add(
              new SimReplica(
                  idPrefix + "-" + i,
                  template.dpRank() + k,
                  template.model(),
                  e.baseUrl(),
                  template.engine().blockSize(),
                  e.kvEventsEndpoint(k),
                  e.replayEndpoint(k),
                  roles.get(i),
                  dp));
        }
      }
    } catch (IOException | RuntimeException e) {
      engines.forEach(SimEngine::close);
      throw e;
    }
    return new SimFleet(engines, specs);
  }

  public List<SimEngine> engines() {
    return engines;
  }

  /** One replica per engine rank, as an agent serves them. */
  public List<SimReplica> replicas() {
    return specs;
  }

  @Override
  public void close() {
    engines.forEach(SimEngine::close);
  }
}
