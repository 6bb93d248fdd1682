package io.kvrouter.cli;

import java.time.Duration;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.SelfUp;
import org.apache.pekko.cluster.typed.Subscribe;

/** Keeps a node's process alive until the node terminates, printing when it is up. */
final class NodeRunner {

  private NodeRunner() {}

  /**
   * Prints a "joined" line when the node is Up, then blocks until the system terminates.
   *
   * @return the process's exit status ({@link ExitStatus}): 1 when the node could not go on (the
   *     cause printed on stderr), 0 when it was asked to stop
   */
  static int printJoinedAndWait(ActorSystem<Void> system) throws Exception {
    Cluster cluster = Cluster.get(system);
    var watcher =
        system.systemActorOf(
            Behaviors.<SelfUp>receive(
                    (ctx, up) -> {
                      System.out.println(
                          "kvrouter node up: "
                              + cluster.selfMember().address()
                              + " roles="
                              + cluster.selfMember().getRoles());
                      System.out.flush();
                      return Behaviors.stopped();
                    })
                .narrow(),
            "self-up-printer",
            org.apache.pekko.actor.typed.Props.empty());
    cluster.subscriptions().tell(Subscribe.create(watcher, SelfUp.class));
    // SIGTERM: Pekko's own JVM shutdown hook runs coordinated shutdown (the drain: not-ready,
    // unbind, streams finish, leave the cluster). This hook only keeps the JVM from exiting before
    // the system has terminated, bounded by the phases' total timeout and a margin
    // (kvrouter.node.drain.margin).
    Duration bound =
        Duration.ofMillis(
                CoordinatedShutdown.get(Adapter.toClassic(system)).totalTimeout().toMillis())
            .plus(system.settings().config().getDuration("kvrouter.node.drain.margin"));
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  system.terminate();
                  try {
                    system
                        .getWhenTerminated()
                        .toCompletableFuture()
                        .get(bound.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                  } catch (Exception ignored) {
                    // the JVM is going down anyway
                  }
                },
                "kvrouter-shutdown"));
    system.getWhenTerminated().toCompletableFuture().get();
    ExitStatus.Outcome outcome =
        ExitStatus.of(CoordinatedShutdown.get(Adapter.toClassic(system)).getShutdownReason());
    outcome.explanation().ifPresent(System.err::println);
    return outcome.status();
  }
}
