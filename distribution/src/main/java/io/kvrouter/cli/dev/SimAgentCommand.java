package io.kvrouter.cli.dev;

import io.kvrouter.agent.ReplicaSpec;
import io.kvrouter.cli.AgentCommand;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.sim.SimApis;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.sim.SimFleet;
import io.kvrouter.sim.SimReplica;
import java.util.Collections;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvrouter agent} of the full command: the node's agent, which may also start simulated
 * engines in-process ({@code --sim N}) and serve them, for the demo, the dev overlay and the tests.
 */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    description =
        "Run a replica agent node: turns an engine's KV events into cluster events and registers"
            + " its replicas. Point it at an engine (--engine-url, --kv-events, --replay) or let it"
            + " start simulated engines in-process (--sim N).")
public final class SimAgentCommand extends AgentCommand {

  @Option(
      names = "--sim",
      defaultValue = "0",
      description = "Start N simulated engines in-process instead of --engine-url.")
  private int sim;

  @Option(
      names = "--sim-host",
      defaultValue = "127.0.0.1",
      description =
          "Address the simulated engines bind and are announced at; on several machines give"
              + " this host's address, which ingresses must reach (default: ${DEFAULT-VALUE}).")
  private String simHost;

  @Option(
      names = "--sim-http-base",
      defaultValue = "8000",
      description =
          "HTTP port of simulated engine 0 (then +1 each; 0 = free ports; default: ${DEFAULT-VALUE}).")
  private int simHttpBase;

  @Option(
      names = "--sim-zmq-base",
      defaultValue = "5557",
      description =
          "KV-event port of simulated engine 0 (replay on +1, next engine +2; 0 = free"
              + " ports; default: ${DEFAULT-VALUE}).")
  private int simZmqBase;

  /** The shape and speed of the engines {@code --sim} starts. */
  @Mixin SimEngineOptions simEngine;

  private SimFleet fleet;

  @Override
  protected List<ReplicaSpec> replicas(TokenizerRegistry tokenizers) throws Exception {
    if (sim <= 0) {
      return super.replicas(tokenizers);
    }
    SimEngineSettings template =
        SimEngineSettings.loopback()
            .withHost(simHost)
            .withModel(model)
            .withTokenizer(ModelSimTokenizer.forModel(tokenizers, model))
            .withEngine(simEngine.config(blockSize))
            .withTransfer(simEngine.transfer())
            .withLoraModules(simEngine.loraModules())
            .withApis(SimApis.vllm().withRuntimeLora(simEngine.runtimeLora(false)))
            .withImages(simEngine.images())
            .withDataParallel(0, dpSize);
    fleet =
        SimFleet.start(
            Collections.nCopies(sim, role),
            replicaId == null ? "sim" : replicaId,
            simHttpBase,
            simZmqBase,
            template);
    List<ReplicaSpec> replicas = specs(fleet);
    for (ReplicaSpec r : replicas) {
      System.out.println(
          "kvrouter agent: simulated engine "
              + r.replicaId()
              + " at "
              + r.baseUrl()
              + ", KV events "
              + r.kvEventsEndpoint()
              + ", replay "
              + r.replayEndpoint());
    }
    return replicas;
  }

  /** The replicas {@code fleet} serves, as the agent is told of them. */
  public static List<ReplicaSpec> specs(SimFleet fleet) {
    return fleet.replicas().stream().map(SimAgentCommand::spec).toList();
  }

  /** One simulated engine rank as a replica the agent serves (all topics of its events). */
  public static ReplicaSpec spec(SimReplica r) {
    return new ReplicaSpec(
        r.replicaId(),
        r.dpRank(),
        r.model(),
        r.baseUrl(),
        r.blockSize(),
        r.kvEventsEndpoint(),
        r.replayEndpoint(),
        "",
        r.role(),
        r.dpSize());
  }

  @Override
  protected String missingEngineMessage() {
    return "give --engine-url (and --kv-events) or --sim N";
  }

  @Override
  protected void stopped() {
    if (fleet != null) {
      fleet.close();
    }
  }
}
