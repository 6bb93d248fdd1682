package io.kvrouter.cli;

import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorSystem;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code kvrouter ingress}: an ingress node (HTTP API, tracker) joining the cluster. */
@Command(
    name = "ingress",
    mixinStandardHelpOptions = true,
    description = "Run an ingress node: OpenAI/Anthropic HTTP API and a KV tracker, in the cluster.")
final class IngressCommand implements Callable<Integer> {

  @Mixin NodeOptions node;

  @Override
  public Integer call() throws Exception {
    ActorSystem<Void> system =
        NodeBootstrap.start(node.toSettings(List.of(NodeSettings.ROLE_INGRESS)), Map.of());
    NodeRunner.printJoinedAndWait(system);
    return 0;
  }
}
