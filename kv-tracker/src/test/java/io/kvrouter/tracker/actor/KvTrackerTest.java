package io.kvrouter.tracker.actor;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.serialization.WireTraffic;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.IntentMessage;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.RouteIntent;
import io.kvrouter.protocol.SharedTiming;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.WirePlane;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.tracker.Decision;
import io.kvrouter.tracker.RouteRequest;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.TrackerDigests;
import io.kvrouter.tracker.feed.GapDetected;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ManualTime;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class KvTrackerTest {

  private static final BlockKeys KEYS = BlockKeys.of("m", 16);
  private static final Duration TICK = Duration.ofSeconds(1);

  /** A clock reading in the rotation period where in-1 decides after in-2. */
  private static final long ROTATION_OF_SECOND_TURN = 1_000;

  private ActorTestKit kit;
  private ManualTime manualTime;
  private final AtomicLong now = new AtomicLong(1_000);
  private TestProbe<ReservationEvent> reservations;
  private TestProbe<GapDetected> gaps;
  private ActorRef<KvTracker.Command> tracker;

  @BeforeEach
  void start() {
    kit = ActorTestKit.create(ManualTime.config());
    manualTime = ManualTime.get(kit.system());
    reservations = kit.createTestProbe();
    gaps = kit.createTestProbe();
    tracker = spawnTracker(false);
  }

  /** A tracker of {@code in-1} that knows replicas {@code a} and {@code b}. */
  private ActorRef<KvTracker.Command> spawnTracker(boolean preciseHolds) {
    return spawnTracker(TrackerConfig.defaults("in-1"), kit.system().ignoreRef(), preciseHolds);
  }

  private ActorRef<KvTracker.Command> spawnTracker(
      TrackerConfig config, ActorRef<IntentMessage> intentsOut, boolean preciseHolds) {
    ActorRef<KvTracker.Command> spawned =
        kit.spawn(
            KvTracker.create(
                config,
                now::get,
                TICK,
                reservations.getRef(),
                gaps.getRef(),
                kit.system().ignoreRef(),
                intentsOut,
                preciseHolds));
    for (String id : List.of("a", "b")) {
      spawned.tell(
          new KvTracker.ReplicaUp(
              new ReplicaInfo(
                  id, 0, "m", "http://" + id, 16, List.of(Tier.GPU), "both", true, true)));
    }
    return spawned;
  }

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static int[] tokens(int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = 7 * i + 3;
    }
    return t;
  }

  /** Tokens sharing no block with {@link #tokens}. */
  private static int[] otherTokens(int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = 11 * i + 5;
    }
    return t;
  }

  /** Replica b stores the first 4 blocks of {@code prompt}. */
  private void storeFirstBlocksOnB(long[] prompt) {
    tracker.tell(
        new KvTracker.ApplyBatch(
            new KvEventBatch(
                "b",
                1,
                0,
                new KvEvent[] {
                  new BlocksStored(
                      BlocksStored.ROOT,
                      new long[] {1, 2, 3, 4},
                      java.util.Arrays.copyOf(prompt, 4),
                      Tier.GPU)
                })));
  }

  /** Another router, in-2, is known: its reservation arrived, 5 ms after it made it. */
  private void aPeerReservationArrived() {
    tracker.tell(
        new KvTracker.ApplyReservation(
            new Reserved(
                "in-2",
                0,
                "p1",
                "a",
                10,
                10,
                BlocksStored.ROOT,
                new long[0],
                60_000,
                now.get() - 5)));
  }

  /** Spawns the tracker with {@code policy}; returns the probe that receives its intents. */
  private TestProbe<IntentMessage> intentsOf(String policy) {
    TestProbe<IntentMessage> intents = kit.createTestProbe();
    tracker =
        spawnTracker(TrackerConfig.defaults("in-1").withPolicy(policy), intents.getRef(), false);
    return intents;
  }

  private TrackerDigests digests() {
    TestProbe<TrackerDigests> probe = kit.createTestProbe();
    tracker.tell(new KvTracker.GetDigests(probe.getRef()));
    return probe.receiveMessage();
  }

  @Test
  void selectAndReserve_repliesWithTheCachedReplica_andPublishesTheReservation() {
    long[] prompt = KEYS.keys(tokens(128));
    storeFirstBlocksOnB(prompt);
    TestProbe<Decision> reply = kit.createTestProbe();
    tracker.tell(
        new KvTracker.SelectAndReserve(new RouteRequest("q1", "m", prompt, 128), reply.getRef()));

    Decision decision = reply.receiveMessage();
    assertThat(decision.chosen()).isEqualTo("b");
    Reserved published = (Reserved) reservations.receiveMessage();
    assertThat(published).isEqualTo(decision.reserved());
    assertThat(published.newKeys()).hasSize(4);

    tracker.tell(new KvTracker.PrefillDone("q1"));
    assertThat(reservations.receiveMessage()).isInstanceOf(PrefillCompleted.class);
    tracker.tell(new KvTracker.Release("q1"));
    assertThat(reservations.receiveMessage()).isInstanceOf(Released.class);
    assertThat(digests().origins()).isEmpty();
  }

  /**
   * Another router is known (its reservation, 5 ms on the way): a 60k-token prompt, about 2.4 s of
   * prefill, waits three steps of 1.2 delays (18 ms) before its decision; a shorter one sent after
   * it (8k tokens, about 150 ms, its first blocks cached on b, so it waits for no router before it
   * in turn either) is decided at once meanwhile, and the long one, decided on the state after the
   * wait, avoids the shorter one's replica.
   */
  @Test
  void aLongPrompt_amongSeveralRouters_isDecidedAfterItsHold_andShortOnesGoOnMeanwhile() {
    long[] shortPrompt = KEYS.keys(otherTokens(8_000));
    storeFirstBlocksOnB(shortPrompt);
    TestProbe<Decision> longReply = aLongPromptAmongTwoRouters();
    TestProbe<Decision> shortReply = kit.createTestProbe();
    tracker.tell(
        new KvTracker.SelectAndReserve(
            new RouteRequest("short", "m", shortPrompt, 8_000), shortReply.getRef()));
    String shortOne = shortReply.receiveMessage().chosen();

    manualTime.expectNoMessageFor(Duration.ofMillis(17), longReply);
    manualTime.timePasses(Duration.ofMillis(1));
    Decision held = longReply.receiveMessage();
    assertThat(held.chosen()).isNotEqualTo(shortOne);
    assertThat(held.heldMillis()).isEqualTo(18);
  }

  /**
   * In production a hold ends on the JDK timer, not on the actor system's scheduler (whose 10 ms
   * tick would stretch it): here the manual scheduler never moves, and the held decision still
   * comes, after its 18 ms.
   */
  @Test
  void preciseHolds_endOnTheirOwnTimer_notOnTheSchedulersTick() {
    tracker = spawnTracker(true);
    Decision held = aLongPromptAmongTwoRouters().receiveMessage(Duration.ofSeconds(5));
    assertThat(held.heldMillis()).isEqualTo(18);
    assertThat(held.reserved()).isNotNull();
  }

  /**
   * Another router is known (its reservation arrived after 5 ms); a 60k-token prompt is asked for:
   * returns where its decision will come.
   */
  private TestProbe<Decision> aLongPromptAmongTwoRouters() {
    aPeerReservationArrived();
    TestProbe<Decision> longReply = kit.createTestProbe();
    tracker.tell(
        new KvTracker.SelectAndReserve(
            new RouteRequest("long", "m", KEYS.keys(tokens(60_000)), 60_000), longReply.getRef()));
    return longReply;
  }

  /**
   * Under intents, a held request is announced as it is held, with its decision time and its
   * uncached tokens on the replica holding a prefix of it (b, 4 blocks of 16); every tick shares
   * the timing model. A peer's shared model is what turns intents on here.
   */
  @Test
  void underIntents_aHeldRequestIsAnnounced_andTheTimingModelIsShared() {
    TestProbe<IntentMessage> intents = intentsOf("kvrouter@intents.enabled=on");
    long[] prompt = KEYS.keys(tokens(4_096));
    storeFirstBlocksOnB(prompt);
    aPeerReservationArrived();
    tracker.tell(new KvTracker.PeerTiming("in-2", new SharedTiming(0, 16.5, 15.2, 4.2, 1.0)));
    TestProbe<Decision> reply = kit.createTestProbe();
    tracker.tell(
        new KvTracker.SelectAndReserve(
            new RouteRequest("long", "m", prompt, 4_096), reply.getRef()));

    RouteIntent intent = (RouteIntent) intents.receiveMessage();
    assertThat(intent.model()).isEqualTo("m");
    assertThat(intent.promptTokens()).isEqualTo(4_096);
    assertThat(intent.replicaIds()).containsExactly("b");
    assertThat(intent.uncachedTokens()).containsExactly(4_096 - 64);
    manualTime.timePasses(Duration.ofMillis(intent.decideAtMillis() - now.get()));
    assertThat(reply.receiveMessage().heldMillis()).isEqualTo(intent.decideAtMillis() - now.get());

    manualTime.timePasses(TICK);
    assertThat(intents.receiveMessage()).isInstanceOf(SharedTiming.class);
  }

  /**
   * Among two routers, at this one's turn after the other's: two prompts no replica holds (1,600
   * tokens, about 25 ms of prefill) reach it at once. The first, alone as it arrives, looks 1 ms
   * for company; having found it, it waits out its turn with the second, and both are decided 6 ms
   * on (the peer's observed 5 ms delay and 1). Neither is announced as an intent, though intents
   * are on: a cold lead would only show the peer phantom work.
   */
  @Test
  void coldLeads_lookForCompany_thenWaitTheirTurn_unannounced() {
    now.set(ROTATION_OF_SECOND_TURN);
    TestProbe<IntentMessage> intents = intentsOf("kvrouter");
    aPeerReservationArrived();
    tracker.tell(new KvTracker.PeerTiming("in-2", new SharedTiming(0, 16.5, 15.2, 4.2, 1.0)));
    TestProbe<Decision> first = kit.createTestProbe();
    TestProbe<Decision> second = kit.createTestProbe();
    tracker.tell(
        new KvTracker.SelectAndReserve(
            new RouteRequest("c1", "m", KEYS.keys(tokens(1_600)), 1_600), first.getRef()));
    tracker.tell(
        new KvTracker.SelectAndReserve(
            new RouteRequest("c2", "m", KEYS.keys(otherTokens(1_600)), 1_600), second.getRef()));

    manualTime.timePasses(Duration.ofMillis(1));
    first.expectNoMessage(Duration.ofMillis(50));
    manualTime.timePasses(Duration.ofMillis(5));
    assertThat(first.receiveMessage().heldMillis()).isEqualTo(6);
    assertThat(second.receiveMessage().heldMillis()).isEqualTo(6);
    intents.expectNoMessage(Duration.ofMillis(50));
  }

  /** Without intents nothing goes to the intents output: a held request is not announced. */
  @Test
  void withoutIntents_nothingIsAnnounced() {
    TestProbe<IntentMessage> intents = intentsOf("kvrouter@intents.enabled=off");
    TestProbe<Decision> longReply = aLongPromptAmongTwoRouters();
    manualTime.timePasses(Duration.ofMillis(18));
    assertThat(longReply.receiveMessage().heldMillis()).isEqualTo(18);
    manualTime.timePasses(TICK);
    intents.expectNoMessage(Duration.ofMillis(50));
  }

  /**
   * The asker gave up during the hold (its ask timed out, the client left): nothing is reserved.
   */
  @Test
  void aReleaseDuringTheHold_dropsThePlacement_beforeItReservesAnything() {
    TestProbe<Decision> longReply = aLongPromptAmongTwoRouters();
    tracker.tell(new KvTracker.Release("long"));
    manualTime.expectNoMessageFor(Duration.ofMillis(50), longReply, reservations);
    assertThat(digests().origins()).doesNotContainKey("in-1");
  }

  @Test
  void gap_isReportedForReplay() {
    tracker.tell(new KvTracker.ApplyBatch(new KvEventBatch("a", 1, 0, new KvEvent[0])));
    tracker.tell(new KvTracker.ApplyBatch(new KvEventBatch("a", 1, 3, new KvEvent[0])));
    assertThat(gaps.receiveMessage()).isEqualTo(new GapDetected("a", 1, 1));
    assertThat(digests().replicas().get("a").seq()).isZero();
  }

  @Test
  void ownLeaseEnd_isPublishedAsARelease_onTheTimer() {
    TestProbe<Decision> reply = kit.createTestProbe();
    tracker.tell(
        new KvTracker.SelectAndReserve(
            new RouteRequest("q1", "m", KEYS.keys(tokens(32)), 32), reply.getRef()));
    Reserved reserved = (Reserved) reservations.receiveMessage();

    now.addAndGet(TrackerConfig.defaults("in-1").leaseMillis());
    manualTime.timePasses(TICK);
    assertThat(reservations.receiveMessage())
        .isEqualTo(new Released("in-1", reserved.seq() + 1, "q1"));
    assertThat(digests().origins()).isEmpty();
  }

  @Test
  void peerReservation_staysUntilItsOriginEndsIt_whateverTheClock() {
    tracker.tell(
        new KvTracker.ApplyReservation(
            new Reserved("in-2", 0, "p1", "a", 10, 10, BlocksStored.ROOT, new long[0], 5_000)));
    assertThat(digests().origins()).containsKey("in-2");

    now.addAndGet(60_000);
    manualTime.timePasses(TICK);
    assertThat(digests().origins()).containsKey("in-2");
    tracker.tell(new KvTracker.ApplyReservation(new Released("in-2", 1, "p1")));
    assertThat(digests().origins()).doesNotContainKey("in-2");
  }

  @Test
  void ingressLeft_dropsItsReservations() {
    tracker.tell(
        new KvTracker.ApplyReservation(
            new Reserved("in-3", 0, "p1", "a", 10, 10, BlocksStored.ROOT, new long[0], 60_000)));
    tracker.tell(new KvTracker.IngressLeft("in-3"));
    assertThat(digests().origins()).isEmpty();
  }

  @Test
  void appliedEventBatches_chargeTheirCpuToTheEventPlane() {
    WireTraffic traffic = WireTraffic.get(kit.system());
    long eventsBefore = traffic.cpuNanos(WirePlane.EVENTS, WireTraffic.Work.APPLY);
    long reservationsBefore = traffic.cpuNanos(WirePlane.RESERVATIONS, WireTraffic.Work.APPLY);
    long[] prompt = KEYS.keys(tokens(16 * 64));
    long[] hashes = new long[prompt.length];
    for (int i = 0; i < hashes.length; i++) {
      hashes[i] = 1_000 + i;
    }
    // Enough work that the thread CPU clock moves whatever its resolution.
    for (int seq = 0; seq < 500; seq++) {
      KvEvent stored = new BlocksStored(BlocksStored.ROOT, hashes, prompt, Tier.GPU);
      KvEvent cleared = new io.kvrouter.protocol.ReplicaCleared();
      tracker.tell(
          new KvTracker.ApplyBatch(new KvEventBatch("a", 1, seq, new KvEvent[] {stored, cleared})));
    }
    digests(); // every batch before it has been applied

    assertThat(traffic.cpuNanos(WirePlane.EVENTS, WireTraffic.Work.APPLY))
        .isGreaterThan(eventsBefore);
    assertThat(traffic.cpuNanos(WirePlane.RESERVATIONS, WireTraffic.Work.APPLY))
        .isEqualTo(reservationsBefore);
  }
}
