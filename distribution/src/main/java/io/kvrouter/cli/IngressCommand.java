package io.kvrouter.cli;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.ingress.node.IngressGuardian;
import io.kvrouter.ingress.node.TrackerSettings;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorSystem;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code kvrouter ingress}: an ingress node (HTTP API, tracker) joining the cluster. */
@Command(
    name = "ingress",
    mixinStandardHelpOptions = true,
    description =
        "Run an ingress node: OpenAI/Anthropic HTTP API and a KV tracker, in the cluster.")
public final class IngressCommand implements Callable<Integer> {

  @Mixin NodeOptions node;

  @Option(
      names = "--http-port",
      defaultValue = "8080",
      description = "HTTP port of the OpenAI/Anthropic API (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(
      names = "--http-host",
      defaultValue = "0.0.0.0",
      description = "Interface the HTTP API binds (default: ${DEFAULT-VALUE}).")
  String httpHost;

  @Option(
      names = "--policy",
      defaultValue = "kvrouter",
      description =
          "Routing policy (default: ${DEFAULT-VALUE}; the full command also runs the lab's peer"
              + " baselines, see `kvrouter lab --help`).")
  String policy;

  @Override
  public Integer call() throws Exception {
    NodeSettings settings =
        node.toSettings(List.of(NodeSettings.ROLE_INGRESS))
            .withOverrides(
                ConfigFactory.parseMap(
                    Map.of(
                        "kvrouter.ingress.http.port", httpPort,
                        "kvrouter.ingress.http.host", httpHost,
                        "kvrouter.tracker.policy.name", policy)));
    try {
      TrackerSettings.fromConfig(settings.toConfig()); // a bad setting fails here, not in the node
    } catch (IllegalArgumentException | ConfigException e) {
      System.err.println("kvrouter ingress: " + e.getMessage());
      return 2;
    }
    ActorSystem<Void> system =
        NodeBootstrap.start(
            settings, Map.of(NodeSettings.ROLE_INGRESS, IngressGuardian.roleGuardian()));
    return NodeRunner.printJoinedAndWait(system);
  }
}
