package io.kvrouter.config.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How one cluster node starts: its address, roles, seeds and configuration profile.
 *
 * @param profile {@code dev}, {@code multi-node} or {@code kubernetes} (a file in {@code
 *     kvrouter/profiles/}), or {@code null} for none
 * @param hostname address other nodes reach this one at; {@code null} keeps the profile's
 * @param port Artery port; 0 picks a free one; {@code -1} keeps the profile's
 * @param roles {@code ingress}, {@code agent}
 * @param seedNodes seed addresses; empty means self-join (or wait, when self-join is off)
 * @param overrides any further configuration, highest precedence
 */
public record NodeSettings(
    String profile,
    String hostname,
    int port,
    List<String> roles,
    List<String> seedNodes,
    Config overrides) {

  public static final String ROLE_INGRESS = "ingress";
  public static final String ROLE_AGENT = "agent";

  public NodeSettings {
    roles = List.copyOf(roles);
    seedNodes = List.copyOf(seedNodes);
    overrides = overrides == null ? ConfigFactory.empty() : overrides;
    for (String role : roles) {
      if (!role.equals(ROLE_INGRESS) && !role.equals(ROLE_AGENT)) {
        throw new IllegalArgumentException(
            "unknown role '" + role + "': use " + ROLE_INGRESS + " or " + ROLE_AGENT);
      }
    }
  }

  /** A node of the single-JVM dev profile on loopback with a free port. */
  public static NodeSettings dev(List<String> roles, List<String> seedNodes) {
    return new NodeSettings("dev", "127.0.0.1", 0, roles, seedNodes, null);
  }

  /** The same settings with more configuration on top. */
  public NodeSettings withOverrides(Config more) {
    return new NodeSettings(
        profile, hostname, port, roles, seedNodes, more.withFallback(overrides));
  }

  /**
   * The full configuration of this node: JVM system properties, overrides, then the values of this
   * record, then the profile, then {@code kvrouter/node.conf}, then the application's and
   * libraries' configuration ({@code application.conf}, {@code reference.conf}).
   */
  public Config toConfig() {
    Map<String, Object> values = new HashMap<>();
    if (hostname != null) {
      values.put("kvrouter.node.hostname", hostname);
    }
    if (port >= 0) {
      values.put("kvrouter.node.port", port);
    }
    values.put("kvrouter.node.roles", roles);
    if (!seedNodes.isEmpty()) {
      values.put("kvrouter.node.seed-nodes", seedNodes);
    }
    Config base = ConfigFactory.parseResources("kvrouter/node.conf");
    if (profile != null) {
      Config profileConfig = ConfigFactory.parseResources("kvrouter/profiles/" + profile + ".conf");
      if (profileConfig.isEmpty()) {
        throw new IllegalArgumentException(
            "no configuration profile '" + profile + "': use dev, multi-node or kubernetes");
      }
      base = profileConfig.withFallback(base);
    }
    Config merged =
        ConfigFactory.defaultOverrides() // -D system properties win, as in ConfigFactory.load()
            .withFallback(overrides)
            .withFallback(ConfigFactory.parseMap(values))
            .withFallback(base)
            .withFallback(ConfigFactory.defaultApplication())
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    Config node = merged.getConfig("kvrouter.node");
    Map<String, Object> pekko = new HashMap<>();
    pekko.put("pekko.remote.artery.canonical.hostname", node.getString("hostname"));
    pekko.put("pekko.remote.artery.canonical.port", node.getInt("port"));
    pekko.put("pekko.cluster.roles", node.getStringList("roles"));
    pekko.put("pekko.cluster.seed-nodes", node.getStringList("seed-nodes"));
    // Connect from the address the node binds (else every outbound Artery connection leaves from
    // the default route's address, and a node on 127.0.0.2 would appear to come from 127.0.0.1).
    String bind = merged.getString("pekko.remote.artery.bind.hostname");
    String from = bind.isEmpty() ? node.getString("hostname") : bind;
    if (merged.getString("pekko.remote.artery.advanced.tcp.outbound-client-hostname").isEmpty()
        && !from.equals("0.0.0.0")
        && !from.equals("::")) {
      pekko.put("pekko.remote.artery.advanced.tcp.outbound-client-hostname", from);
    }
    // Each drain step must fit its phase, with margin for the work around it.
    long margin = node.getDuration("drain.margin").toMillis();
    pekko.put(
        "pekko.coordinated-shutdown.phases.before-service-unbind.timeout",
        (node.getDuration("drain.unready-delay").toMillis() + margin) + "ms");
    pekko.put(
        "pekko.coordinated-shutdown.phases.service-unbind.timeout",
        (node.getDuration("drain.deregister-delay").toMillis() + margin) + "ms");
    pekko.put(
        "pekko.coordinated-shutdown.phases.service-requests-done.timeout",
        (node.getDuration("drain.grace-period").toMillis() + margin) + "ms");
    return ConfigFactory.parseMap(pekko).withFallback(merged);
  }

  /** The actor system name every node of a cluster shares. */
  public String systemName() {
    return toConfig().getString("kvrouter.node.system-name");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NodeSettings s
        && port == s.port
        && Objects.equals(profile, s.profile)
        && Objects.equals(hostname, s.hostname)
        && roles.equals(s.roles)
        && seedNodes.equals(s.seedNodes)
        && overrides.equals(s.overrides);
  }

  @Override
  public int hashCode() {
    return Objects.hash(profile, hostname, port, roles, seedNodes);
  }
}
