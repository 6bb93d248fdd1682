package io.kvrouter.cli;

import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorSystem;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code kvrouter agent}: a replica agent node serving one or more engines. */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    description =
        "Run a replica agent node: turns an engine's KV events into cluster events and registers"
            + " its replicas.")
final class AgentCommand implements Callable<Integer> {

  @Mixin NodeOptions node;

  @Override
  public Integer call() throws Exception {
    ActorSystem<Void> system =
        NodeBootstrap.start(node.toSettings(List.of(NodeSettings.ROLE_AGENT)), Map.of());
    NodeRunner.printJoinedAndWait(system);
    return 0;
  }
}
