package io.kvrouter.ingress.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.http.IngressFrontend;
import io.kvrouter.ingress.http.IngressSettings;
import io.kvrouter.ingress.http.StaticAdminView;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.ReplicaLoadSnapshot;
import io.kvrouter.tracker.TrackerConfig;
import io.kvrouter.tracker.actor.KvTracker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Strict mode's gate rounds in {@link TrackerRouter}, over a real {@link KvTracker} and a {@link
 * FakeGate} whose ledgers other ingresses may already fill. The tracker's clock stands still, so no
 * lease ends during a test: whatever a ledger still holds at the end was left behind.
 */
class TrackerRouterStrictTest {

  static final String MODEL = "kvrouter-demo";
  static final Duration ASK_TIMEOUT = Duration.ofSeconds(5);
  static ActorTestKit kit;
  static TokenizerRegistry tokenizers;

  ActorRef<KvTracker.Command> tracker;
  ReplicaDirectory directory;
  FakeGate gate;

  @BeforeAll
  static void startKit() {
    kit = ActorTestKit.create();
    tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
  }

  @AfterAll
  static void stopKit() {
    kit.shutdownTestKit();
    tokenizers.close();
  }

  @BeforeEach
  void start() {
    tracker = tracker(kit, kit.system().ignoreRef());
    directory = new ReplicaDirectory();
    for (String id : List.of("a", "b")) {
      ReplicaInfo info =
          new ReplicaInfo(
              id, 0, MODEL, "http://127.0.0.1:9/" + id, 16, List.of(Tier.GPU), "both", true, true);
      tracker.tell(new KvTracker.ReplicaUp(info));
      directory.put(info);
    }
    gate = new FakeGate();
  }

  /**
   * A tracker of ingress {@code ingress-1} whose clock stands still, telling its reservation events
   * to {@code peers}.
   */
  static ActorRef<KvTracker.Command> tracker(ActorTestKit kit, ActorRef<ReservationEvent> peers) {
    return kit.spawn(
        KvTracker.create(
            TrackerConfig.defaults("ingress-1"),
            () -> 1_000L,
            Duration.ofHours(1),
            peers,
            kit.system().ignoreRef()));
  }

  TrackerRouter router(ActorRef<KvTracker.Command> to, Duration askTimeout) {
    return new TrackerRouter(
        to,
        kit.system().scheduler(),
        askTimeout,
        directory,
        tokenizers,
        new IngressMetrics(),
        gate);
  }

  static ReplicaQuery query(String id) {
    return new ReplicaQuery(id, MODEL, IntStream.range(0, 64).toArray(), 8, Set.of());
  }

  /** Reservations the tracker holds per replica (every origin). */
  Map<String, ReplicaLoadSnapshot> loads() {
    TestProbe<KvTracker.Loads> probe = kit.createTestProbe();
    tracker.tell(new KvTracker.GetLoads(probe.ref()));
    return probe.receiveMessage().byReplica();
  }

  int reservedOn(String replica) {
    return loads().get(replica).inFlight();
  }

  /** What a warm decides on ({@code program.TurnWarmer}): the replica's other reservations. */
  @Test
  void routed_countsTheOtherRequestsReservedOnItsReplica() throws Exception {
    TrackerRouter router = router(tracker, ASK_TIMEOUT);
    ReplicaQuery first = query("p1");
    String on =
        ((RouteOutcome.Routed) router.selectAndReserve(first).toCompletableFuture().get())
            .target()
            .replicaId();
    ReplicaQuery pinned =
        new ReplicaQuery(
            "p2", MODEL, IntStream.range(0, 64).toArray(), 8, Set.of(), null, on, null);
    RouteOutcome.Routed second =
        (RouteOutcome.Routed) router.selectAndReserve(pinned).toCompletableFuture().get();

    assertThat(second.target().replicaId()).isEqualTo(on);
    assertThat(second.othersInFlight()).as("p1 is reserved there, p2 itself not counted").isOne();
    router.released("p1");
    router.released("p2");
    RouteOutcome.Routed alone =
        (RouteOutcome.Routed)
            router
                .selectAndReserve(
                    new ReplicaQuery(
                        "p3", MODEL, IntStream.range(0, 64).toArray(), 8, Set.of(), null, on, null))
                .toCompletableFuture()
                .get();
    assertThat(alone.othersInFlight()).isZero();
  }

  @Test
  void admittedAtOnce_routesAfterOneAsk_andItsReleaseLeavesTheGate() throws Exception {
    TrackerRouter router = router(tracker, ASK_TIMEOUT);
    RouteOutcome outcome = router.selectAndReserve(query("q1")).toCompletableFuture().get();

    String chosen = ((RouteOutcome.Routed) outcome).target().replicaId();
    assertThat(gate.admits).containsExactly(new FakeGate.Admit(chosen, "q1", false));
    assertThat(reservedOn(chosen)).isEqualTo(1);
    assertThat(gate.held(chosen)).isEqualTo(1);
    assertThat(router.openAdmissions()).isEqualTo(1);

    router.released("q1");
    assertThat(gate.leaves).containsExactly(chosen + ":q1");
    assertThat(router.openAdmissions()).isZero();
    assertThat(reservedOn(chosen)).isZero();
    assertThat(gate.held(chosen)).isZero();
  }

  /**
   * The herding burst's case in small: other ingresses hold requests on every replica that this
   * router has not seen (one on a, two on b and on c). Each gate that turns the request away is
   * counted with what it holds, so the request lands on a, where it makes 2, without a forced
   * admission; excluding the replicas that turned it away instead went round until the last
   * candidate was forced, whichever it was.
   */
  @Test
  void turnedAwayByTheGates_landsWhereTheirCountsMakeItLeastLoaded_withoutForcing()
      throws Exception {
    ReplicaInfo c =
        new ReplicaInfo(
            "c", 0, MODEL, "http://127.0.0.1:9/c", 16, List.of(Tier.GPU), "both", true, true);
    tracker.tell(new KvTracker.ReplicaUp(c));
    directory.put(c);
    gate.heldElsewhere("a", "peer-1");
    for (String replica : List.of("b", "c")) {
      gate.heldElsewhere(replica, "peer-" + replica + "-1")
          .heldElsewhere(replica, "peer-" + replica + "-2");
    }
    TrackerRouter router = router(tracker, ASK_TIMEOUT);
    RouteOutcome outcome = router.selectAndReserve(query("q1")).toCompletableFuture().get();

    assertThat(((RouteOutcome.Routed) outcome).target().replicaId()).isEqualTo("a");
    assertThat(gate.admits).noneMatch(FakeGate.Admit::forced);
    assertThat(gate.admits.stream().filter(a -> a.replica().equals("a")).count())
        .as("a turned it away at most once, before its count was known")
        .isLessThanOrEqualTo(2);
    assertThat(gate.held("a")).isEqualTo(2);
    assertThat(gate.held("b")).isEqualTo(2);
    assertThat(gate.held("c")).isEqualTo(2);
    assertThat(reservedOn("a")).isEqualTo(1);
    assertThat(reservedOn("b")).isZero();
    assertThat(reservedOn("c")).isZero();
  }

  /**
   * Each turn-away is followed by one more request from another ingress on that replica, so what
   * the gates report is always one behind: the request is turned away {@value
   * TrackerRouter#GATE_ROUNDS} times per candidate, then its gate admits it regardless.
   */
  @Test
  void gatesWhoseCountsKeepRising_forceTheAdmissionAfterTheRounds() throws Exception {
    gate.heldElsewhere("a", "peer-1").heldElsewhere("b", "peer-2");
    AtomicInteger more = new AtomicInteger();
    gate.onTurnedAway(replica -> gate.heldElsewhere(replica, "more-" + more.incrementAndGet()));
    TrackerRouter router = router(tracker, ASK_TIMEOUT);
    RouteOutcome outcome = router.selectAndReserve(query("q1")).toCompletableFuture().get();

    int asks = 2 * TrackerRouter.GATE_ROUNDS + 1;
    assertThat(gate.admits).hasSize(asks);
    assertThat(gate.admits.stream().map(FakeGate.Admit::replica).distinct())
        .containsExactlyInAnyOrder("a", "b");
    assertThat(gate.admits.subList(0, asks - 1)).noneMatch(FakeGate.Admit::forced);
    FakeGate.Admit forced = gate.admits.get(asks - 1);
    assertThat(forced.forced()).isTrue();
    String other = forced.replica().equals("a") ? "b" : "a";
    assertThat(((RouteOutcome.Routed) outcome).target().replicaId()).isEqualTo(forced.replica());
    // Every turned-away reservation was given back; only the admitted one holds.
    assertThat(reservedOn(forced.replica())).isEqualTo(1);
    assertThat(reservedOn(other)).isZero();

    int before = gate.held(forced.replica());
    router.released("q1");
    assertThat(router.openAdmissions()).isZero();
    assertThat(reservedOn(forced.replica())).isZero();
    assertThat(gate.held(forced.replica())).isEqualTo(before - 1);
  }

  @Test
  void turnedAwayReservations_neverReachThePeers_onlyTheAdmittedOneIsBroadcast() throws Exception {
    TestProbe<ReservationEvent> peers = kit.createTestProbe();
    ActorRef<KvTracker.Command> broadcasting = tracker(kit, peers.ref());
    for (ReplicaInfo info : directory.all()) {
      broadcasting.tell(new KvTracker.ReplicaUp(info));
    }
    gate.heldElsewhere("a", "peer-1").heldElsewhere("b", "peer-2");
    TrackerRouter router = router(broadcasting, ASK_TIMEOUT);
    RouteOutcome outcome = router.selectAndReserve(query("q1")).toCompletableFuture().get();
    String chosen = ((RouteOutcome.Routed) outcome).target().replicaId();
    assertThat(gate.admits.size()).as("turned away before admitted").isGreaterThan(1);

    ReservationEvent first = peers.receiveMessage();
    assertThat(first).isInstanceOf(Reserved.class);
    assertThat(((Reserved) first).replicaId()).isEqualTo(chosen);
    assertThat(first.seq()).as("no seq spent on the attempts turned away").isZero();
    peers.expectNoMessage(Duration.ofMillis(200));
    router.released("q1");
    ReservationEvent last = peers.receiveMessage();
    assertThat(last).isInstanceOf(Released.class);
    assertThat(last.seq()).isEqualTo(1);
    peers.expectNoMessage(Duration.ofMillis(200));
  }

  /**
   * Other ingresses hold more on both replicas than this router can see, and each turn-away is
   * followed by the engine reporting a full queue: every request of the burst is turned away, finds
   * every replica busy, waits in the queue and gets 429.
   */
  @Test
  void burstThatEndsIn429s_leavesNoEntryInTheRouter_andNoReservationInAnyLedger() throws Exception {
    int burst = 12;
    for (int i = 0; i < 2 * burst; i++) {
      gate.heldElsewhere("a", "peer-a-" + i).heldElsewhere("b", "peer-b-" + i);
    }
    gate.onTurnedAway(
        replica ->
            tracker.tell(
                new KvTracker.LoadReported(
                    new ReplicaLoad(replica, 1, 8, 1_000, 1.0, 0, 0, 1_000L))));
    TrackerRouter router = router(tracker, ASK_TIMEOUT);
    IngressSettings settings =
        IngressSettings.fromConfig(
                ConfigFactory.parseString(
                        "kvrouter.ingress { http.host = 127.0.0.1,"
                            + " queue { capacity = 4, max-wait = 200ms, recheck = 20ms } }")
                    .withFallback(ConfigFactory.load()))
            .withPort(0);
    ServerBinding binding =
        IngressFrontend.start(
                kit.system(),
                settings,
                tokenizers,
                router,
                new IngressMetrics(),
                new StaticAdminView())
            .toCompletableFuture()
            .get();
    try {
      HttpClient client = HttpClient.newHttpClient();
      URI uri =
          URI.create(
              "http://127.0.0.1:" + binding.localAddress().getPort() + "/v1/chat/completions");
      List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
      for (int i = 0; i < burst; i++) {
        answers.add(
            client.sendAsync(
                HttpRequest.newBuilder(uri)
                    .header("Content-Type", "application/json")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"model\":\"kvrouter-demo\",\"max_tokens\":8,"
                                + "\"messages\":[{\"role\":\"user\",\"content\":\"same prompt\"}]}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
      }
      for (CompletableFuture<HttpResponse<String>> answer : answers) {
        HttpResponse<String> r = answer.get();
        assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
      }
    } finally {
      binding.unbind().toCompletableFuture().get();
    }

    // Requests that came after both engines reported full queues never met a gate; the others were
    // turned away, and none lasted into a round that forces an admission.
    assertThat(gate.admits).isNotEmpty().noneMatch(FakeGate.Admit::forced);
    assertThat(router.openAdmissions()).isZero();
    assertThat(loads().values()).allSatisfy(l -> assertThat(l.inFlight()).isZero());
    assertThat(gate.held("a")).as("only the other ingresses' requests").isEqualTo(2 * burst);
    assertThat(gate.held("b")).as("only the other ingresses' requests").isEqualTo(2 * burst);
  }

  @Test
  void gateThatDoesNotAnswer_failsTheAttempt_andGivesBackReservationAndAdmission() {
    gate.becomeUnreachable();
    TrackerRouter router = router(tracker, ASK_TIMEOUT);

    assertThatThrownBy(() -> router.selectAndReserve(query("q1")).toCompletableFuture().get())
        .hasCauseInstanceOf(TimeoutException.class);

    String asked = gate.admits.get(0).replica();
    assertThat(gate.leaves).containsExactly(asked + ":q1");
    assertThat(gate.held(asked)).isZero();
    assertThat(router.openAdmissions()).isZero();
    assertThat(loads().values()).allSatisfy(l -> assertThat(l.inFlight()).isZero());
  }

  @Test
  void trackerThatDoesNotAnswerInTime_getsTheReleaseOfWhatItMayStillReserve() {
    TestProbe<KvTracker.Command> slowTracker = kit.createTestProbe();
    TrackerRouter router = router(slowTracker.ref(), Duration.ofMillis(200));

    CompletableFuture<RouteOutcome> outcome =
        router.selectAndReserve(query("q1")).toCompletableFuture();

    slowTracker.expectMessageClass(KvTracker.SelectAndReserve.class);
    assertThat(slowTracker.expectMessageClass(KvTracker.Release.class).requestId()).isEqualTo("q1");
    assertThatThrownBy(outcome::get).hasCauseInstanceOf(TimeoutException.class);
    assertThat(gate.admits).isEmpty();
  }
}
