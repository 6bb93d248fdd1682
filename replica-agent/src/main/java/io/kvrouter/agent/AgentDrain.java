package io.kvrouter.agent;

import io.kvrouter.config.management.DrainSettings;
import io.kvrouter.protocol.AgentRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * An agent's part of the drain: in coordinated shutdown's {@code service-unbind} phase every
 * replica of the node is deregistered ({@link ReplicaAgent.Drain}), then the node waits {@code
 * kvrouter.node.drain.deregister-delay} so every tracker hears of it and stops choosing these
 * replicas before the agent leaves the cluster. Requests already at the engines go on: the engines
 * are not the agent's to stop.
 */
final class AgentDrain {

  private AgentDrain() {}

  static void register(ActorSystem<?> system, List<ActorRef<AgentRequest>> agents) {
    DrainSettings drain = DrainSettings.fromConfig(system.settings().config());
    Duration askTimeout = drain.deregisterDelay().plusSeconds(1);
    CoordinatedShutdown.get(Adapter.toClassic(system))
        .addTask(
            CoordinatedShutdown.PhaseServiceUnbind(),
            "kvrouter-agent-deregister",
            () -> {
              CompletableFuture<?>[] told =
                  agents.stream()
                      .map(
                          a ->
                              AskPattern.<AgentRequest, Done>ask(
                                      a, ReplicaAgent.Drain::new, askTimeout, system.scheduler())
                                  .toCompletableFuture())
                      .toArray(CompletableFuture[]::new);
              return CompletableFuture.allOf(told)
                  .exceptionally(e -> null)
                  .thenCompose(v -> delay(drain.deregisterDelay()));
            });
  }

  private static CompletionStage<Done> delay(Duration d) {
    return CompletableFuture.supplyAsync(
        Done::getInstance, CompletableFuture.delayedExecutor(d.toMillis(), TimeUnit.MILLISECONDS));
  }
}
