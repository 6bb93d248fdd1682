package io.kvrouter.tracker.actor;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tracker's dispatcher ({@link KvTracker#DISPATCHER}) as the module's reference.conf defines
 * it: one thread of its own, apart from the default dispatcher's workers, which every actor spawned
 * on it shares.
 */
class KvTrackerDispatcherTest {

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  /** Answers each message with the name of the thread it ran on. */
  private static Behavior<ActorRef<String>> threadName() {
    return Behaviors.receiveMessage(
        replyTo -> {
          replyTo.tell(Thread.currentThread().getName());
          return Behaviors.same();
        });
  }

  @Test
  void actorsSpawnedOnTheTrackersDispatcher_runOnItsOneThread() {
    DispatcherSelector dispatcher = DispatcherSelector.fromConfig(KvTracker.DISPATCHER);
    ActorRef<ActorRef<String>> first = kit.spawn(threadName(), "first", dispatcher);
    ActorRef<ActorRef<String>> second = kit.spawn(threadName(), "second", dispatcher);
    ActorRef<ActorRef<String>> elsewhere = kit.spawn(threadName(), "elsewhere");
    TestProbe<String> names = kit.createTestProbe();

    first.tell(names.getRef());
    String thread = names.receiveMessage();
    second.tell(names.getRef());
    first.tell(names.getRef());
    elsewhere.tell(names.getRef());

    assertThat(thread).contains(KvTracker.DISPATCHER);
    assertThat(names.receiveSeveralMessages(3))
        .satisfiesExactlyInAnyOrder(
            name -> assertThat(name).isEqualTo(thread),
            name -> assertThat(name).isEqualTo(thread),
            name -> assertThat(name).doesNotContain(KvTracker.DISPATCHER));
  }
}
