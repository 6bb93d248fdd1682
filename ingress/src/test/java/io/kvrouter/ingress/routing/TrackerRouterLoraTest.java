package io.kvrouter.ingress.routing;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.tracker.actor.KvTracker;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * LoRA placement in {@link TrackerRouter} over a real {@link KvTracker}: replicas a, b and c serve
 * the base model, b has adapter {@code sql} loaded. The engines are one loopback HTTP server that
 * lists b's adapter in {@code /v1/models} and records load requests.
 */
class TrackerRouterLoraTest {

  static final String MODEL = "kvrouter-demo";
  static final String ADAPTER = "sql";
  ActorTestKit kit;
  TokenizerRegistry tokenizers;
  ActorRef<KvTracker.Command> tracker;
  TestProbe<ReservationEvent> peers;
  ReplicaDirectory directory;
  HttpServer engines;
  final List<String> loads = new CopyOnWriteArrayList<>();
  volatile boolean refuseLoads;

  @BeforeEach
  void start() throws IOException {
    kit = ActorTestKit.create();
    tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
    engines = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    engines.createContext(
        "/",
        ex -> {
          String path = ex.getRequestURI().getPath();
          byte[] body;
          int status = 200;
          if (path.endsWith("/v1/models")) {
            body =
                ("{\"object\":\"list\",\"data\":[{\"id\":\""
                        + MODEL
                        + "\",\"root\":\"/m\",\"parent\":null},{\"id\":\"sql\",\"root\":\"/adapters/sql\","
                        + "\"parent\":\""
                        + MODEL
                        + "\"}]}")
                    .getBytes(StandardCharsets.UTF_8);
          } else {
            loads.add(
                path
                    + " "
                    + new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            body = "Success".getBytes(StandardCharsets.UTF_8);
            status = refuseLoads ? 500 : 200;
          }
          ex.sendResponseHeaders(status, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    engines.start();
    peers = kit.createTestProbe();
    tracker = TrackerRouterStrictTest.tracker(kit, peers.ref());
    directory = new ReplicaDirectory();
    for (String id : List.of("a", "b", "c")) {
      ReplicaInfo info = info(id, id.equals("b") ? List.of(ADAPTER) : List.of());
      tracker.tell(new KvTracker.ReplicaUp(info));
      directory.put(info);
    }
  }

  @AfterEach
  void stop() {
    engines.stop(0);
    kit.shutdownTestKit();
    tokenizers.close();
  }

  final IngressMetrics metrics = new IngressMetrics();

  TrackerRouter router(double penalty, boolean loadWhereMissing) {
    return new TrackerRouter(
        tracker,
        kit.system().scheduler(),
        Duration.ofSeconds(5),
        directory,
        tokenizers,
        metrics,
        null,
        new SteeringSettings(0, null, penalty),
        new LoraSettings(penalty, loadWhereMissing, Duration.ofSeconds(5), Duration.ofMinutes(1)));
  }

  static int[] prompt(int salt, int tokens) {
    return IntStream.range(0, tokens).map(i -> salt * 100_000 + i).toArray();
  }

  static ReplicaQuery query(String id, String model, int[] tokens) {
    return new ReplicaQuery(id, model, tokens, 8, Set.of());
  }

  static String routed(RouteOutcome outcome) {
    assertThat(outcome).isInstanceOf(RouteOutcome.Routed.class);
    return ((RouteOutcome.Routed) outcome).target().replicaId();
  }

  String place(TrackerRouter router, String id, String model, int[] tokens) throws Exception {
    return routed(router.selectAndReserve(query(id, model, tokens)).toCompletableFuture().get());
  }

  @Test
  void theAdapterIsServedByItsBaseModel_andListedWithIt() {
    TrackerRouter router = router(4096, true);
    assertThat(router.servedModels()).containsExactlyInAnyOrder(MODEL, ADAPTER);
    assertThat(router.baseModel(ADAPTER)).isEqualTo(MODEL);
    assertThat(router.baseModel(MODEL)).isEqualTo(MODEL);
  }

  @Test
  void adapterRequestsAreKeyedWithTheAdapter_notAsTheBaseModel() throws Exception {
    TrackerRouter router = router(4096, true);
    int[] tokens = prompt(1, 64);
    place(router, "lora", ADAPTER, tokens);
    long[] keyed = ((Reserved) peers.receiveMessage()).newKeys();
    router.released("lora");
    peers.receiveMessage();
    place(router, "base", MODEL, tokens);
    long[] plain = ((Reserved) peers.receiveMessage()).newKeys();

    BlockKeys keys = BlockKeys.of(MODEL, 16);
    assertThat(keyed).containsExactly(keys.keys(tokens, ExtraKeys.of(ADAPTER, null)));
    assertThat(plain).containsExactly(keys.keys(tokens, ExtraKeys.NONE));
    Set<Long> shared = new HashSet<>();
    for (long k : keyed) {
      shared.add(k);
    }
    for (long k : plain) {
      assertThat(shared).as("no base block is an adapter block").doesNotContain(k);
    }
  }

  @Test
  void withoutACacheMatch_theReplicaHoldingTheAdapterIsChosen() throws Exception {
    TrackerRouter router = router(4096, true);
    for (int i = 0; i < 20; i++) {
      assertThat(place(router, "q" + i, ADAPTER, prompt(10 + i, 64))).isEqualTo("b");
      router.released("q" + i);
    }
    assertThat(loads).as("nothing was loaded").isEmpty();
  }

  @Test
  void aCacheMatchWins_whereTheAdapterRanBefore() throws Exception {
    directory.put(info("c", List.of(ADAPTER)));
    TrackerRouter router = router(4096, true);
    int[] tokens = prompt(3, 256);
    String first = place(router, "first", ADAPTER, tokens); // its predicted blocks stay there
    List<String> again = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      again.add(place(router, "again" + i, ADAPTER, tokens));
      router.released("again" + i);
    }
    assertThat(again).containsOnly(first);
  }

  @Test
  void aHotAdapterSpreads_andIsLoadedWhereItGoes_withTheHoldersPath() throws Exception {
    TrackerRouter router = router(100, true);
    List<String> chosen = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      chosen.add(place(router, "q" + i, ADAPTER, prompt(20 + i, 160))); // held: queued prefill
    }
    assertThat(chosen.get(0)).isEqualTo("b");
    String spread = chosen.get(1);
    assertThat(spread).as("b is queued beyond the penalty").isIn("a", "c");
    assertThat(loads)
        .contains(
            "/"
                + spread
                + "/v1/load_lora_adapter {\"lora_name\":\"sql\",\"lora_path\":\"/adapters/sql\"}");
    assertThat(loads).noneMatch(l -> l.startsWith("/b/"));
    assertThat(metrics.scrape()).contains("kvrouter_lora_loads_total{outcome=\"loaded\"}");

    // Until its agent announces it, the engine loaded on counts as a holder: a request there (its
    // prompt cached there) does not load the adapter again.
    int loadsOnSpread = (int) loads.stream().filter(l -> l.startsWith("/" + spread + "/")).count();
    assertThat(place(router, "back", ADAPTER, prompt(21, 160))).isEqualTo(spread);
    assertThat(loads.stream().filter(l -> l.startsWith("/" + spread + "/")).count())
        .isEqualTo(loadsOnSpread);
  }

  @Test
  void withLoadingOff_adapterRequestsGoOnlyToTheHolders() throws Exception {
    TrackerRouter router = router(100, false);
    for (int i = 0; i < 4; i++) {
      assertThat(place(router, "q" + i, ADAPTER, prompt(30 + i, 160))).isEqualTo("b");
    }
    assertThat(loads).isEmpty();
  }

  /** Replica {@code id} of the base model on the loopback engines, with {@code adapters}. */
  private ReplicaInfo info(String id, List<String> adapters) {
    return new ReplicaInfo(
        id,
        0,
        MODEL,
        "http://127.0.0.1:" + engines.getAddress().getPort() + "/" + id,
        16,
        List.of(Tier.GPU),
        ReplicaInfo.BOTH,
        true,
        true,
        List.of(),
        1,
        adapters);
  }

  @Test
  void anEngineThatDoesNotLoadTheAdapter_isLeft_andTheRequestDecidedAgain() throws Exception {
    refuseLoads = true;
    TrackerRouter router = router(100, true);
    assertThat(place(router, "q0", ADAPTER, prompt(40, 160))).isEqualTo("b");
    assertThat(place(router, "q1", ADAPTER, prompt(41, 160)))
        .as("a and c refused the adapter: back to its holder, hot or not")
        .isEqualTo("b");
    assertThat(loads).hasSize(2);
    assertThat(metrics.scrape()).contains("kvrouter_lora_loads_total{outcome=\"failed\"} 2.0");
    router.released("q0");
    router.released("q1");
    TestProbe<KvTracker.Loads> probe = kit.createTestProbe();
    tracker.tell(new KvTracker.GetLoads(probe.ref()));
    assertThat(probe.receiveMessage().byReplica().values())
        .as("the refused attempts' reservations were given back")
        .allMatch(l -> l.inFlight() == 0);
  }
}
