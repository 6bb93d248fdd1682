package io.kvrouter.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.config.node.NodeSettings;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Option;

/** Cluster options shared by every command that starts a node ({@code ingress}, {@code agent}). */
final class NodeOptions {

  @Option(
      names = "--host",
      description = "Address other nodes reach this node at (default: profile's, 127.0.0.1).")
  String host;

  @Option(
      names = "--port",
      description = "Cluster (Artery) port; 0 picks a free one (default: ${DEFAULT-VALUE}).",
      defaultValue = "25520")
  int port;

  @Option(
      names = "--seed-nodes",
      split = ",",
      paramLabel = "ADDR",
      description =
          "Seed node addresses, comma-separated, e.g. pekko://kvrouter@10.0.0.1:25520."
              + " Default: $KVROUTER_SEED_NODES; none forms a new cluster with this node.")
  List<String> seedNodes = new ArrayList<>();

  @Option(
      names = "--profile",
      description =
          "Configuration profile: dev, multi-node, kubernetes (default: ${DEFAULT-VALUE}).",
      defaultValue = "multi-node")
  String profile;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "HOCON file with more settings (kvrouter { ... }, pekko { ... }).")
  File config;

  NodeSettings toSettings(List<String> roles) {
    List<String> seeds = new ArrayList<>(seedNodes);
    String env = System.getenv("KVROUTER_SEED_NODES");
    if (seeds.isEmpty() && env != null && !env.isBlank()) {
      seeds.addAll(
          Arrays.stream(env.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList());
    }
    Config overrides = ConfigFactory.empty();
    if (config != null) {
      if (!config.isFile()) {
        throw new IllegalArgumentException("--config: no such file " + config);
      }
      overrides = ConfigFactory.parseFile(config);
    }
    if (seeds.isEmpty()) {
      // No seeds: this node forms a new cluster.
      overrides = overrides.withFallback(ConfigFactory.parseString("kvrouter.node.self-join = on"));
    }
    return new NodeSettings(profile, host, port, roles, seeds, overrides);
  }
}
