package io.kvrouter.cli;

import java.time.Duration;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.SelfUp;
import org.apache.pekko.cluster.typed.Subscribe;

/** Keeps a node's process alive until the node terminates, printing when it is up. */
final class NodeRunner {

  private NodeRunner() {}

  /** Prints a "joined" line when the node is Up, then blocks until the system terminates. */
  static void printJoinedAndWait(ActorSystem<Void> system) throws Exception {
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
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  system.terminate();
                  try {
                    system
                        .getWhenTerminated()
                        .toCompletableFuture()
                        .get(
                            Duration.ofSeconds(20).toMillis(),
                            java.util.concurrent.TimeUnit.MILLISECONDS);
                  } catch (Exception ignored) {
                    // the JVM is going down anyway
                  }
                },
                "kvrouter-shutdown"));
    system.getWhenTerminated().toCompletableFuture().get();
  }
}
