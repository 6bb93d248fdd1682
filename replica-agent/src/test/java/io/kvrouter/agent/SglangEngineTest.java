package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplayReply;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.protocol.Topics;
import io.kvrouter.testing.SglangEngineDouble;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The agent against {@link SglangEngineDouble} (SGLang's radix cache, hashes, publisher, ranks and
 * HTTP API, written from SGLang's source): one test per fault, with the agent's picture of each
 * replica (what its snapshot gives every tracker) compared with what the engine holds.
 */
class SglangEngineTest {

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final int PAGE = 16;
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final RouterKeyFunction KEYS = new TrackerRouterKeys("m");
  private static final EngineSettings SGLANG = new EngineSettings("sglang", "");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** The engine's identity comes from /get_server_info: its version and page size. */
  @Test
  void identity_isReadFromGetServerInfo() throws Exception {
    try (SglangEngineDouble engine = new SglangEngineDouble(1, PAGE, 64)) {
      EngineIdentity id =
          new EngineProbe(engine.baseUrl(), Duration.ofSeconds(2), -1, "sglang")
              .identity("sglang", "")
              .toCompletableFuture()
              .get(5, TimeUnit.SECONDS);
      assertThat(id)
          .isEqualTo(new EngineIdentity("sglang", SglangEngineDouble.VERSION, "sha256", PAGE));
    }
  }

  /**
   * Two attention data-parallel ranks, each its own replica on its own (port-offset) stream; the
   * alignment probe reaches its rank through the body's data_parallel_rank and passes. A prompt
   * repeated goes to the replica whose picture holds most of it, through SGLang's OpenAI route, and
   * SGLang reports it cached there.
   */
  @Test
  void repeatedPrompts_landWhereTheyAreCached() throws Exception {
    try (SglangEngineDouble engine = new SglangEngineDouble(2, PAGE, 256)) {
      List<ReplicaSpec> ranks = DataParallelRanks.expand(spec(engine, "sg"), 2, 2);
      try (Agent r0 = start(ranks.get(0), true);
          Agent r1 = start(ranks.get(1), true)) {
        for (Agent a : List.of(r0, r1)) {
          ReplicaInfo info = a.info();
          assertThat(info.alignment())
              .as("probe on its own rank")
              .isEqualTo(AlignmentStatus.ALIGNED);
          assertThat(info.engine().version()).isEqualTo(SglangEngineDouble.VERSION);
        }
        List<Agent> agents = List.of(r0, r1);
        int[] a = tokens(10_000, 4);
        int[] b = tokens(20_000, 3);
        r0.serveAndAwait(engine, a);
        r1.serveAndAwait(engine, b);

        for (int[] prompt :
            List.of(a, b, concat(a, tokens(30_000, 2)), concat(b, tokens(40_000, 1)))) {
          int best = bestReplica(agents, prompt);
          int shared = Math.min(prompt.length, best == 0 ? a.length : b.length);
          assertThat(completion(engine, best, prompt))
              .as("cached tokens of the prompt on the chosen rank")
              .isEqualTo(shared);
        }
      }
    }
  }

  /**
   * Prompts that share prefixes (SGLang splits radix nodes, re-announcing their pages) and more
   * pages than the cache holds (it evicts leaves): the agent's picture equals the engine's own
   * block set, by engine hash and by router key, after every request.
   */
  @Test
  void index_equalsTheEnginesOwnBlockSet_throughSplitsAndEvictions() throws Exception {
    try (SglangEngineDouble engine = new SglangEngineDouble(1, PAGE, 10);
        Agent a = start(spec(engine, "set"), false)) {
      a.warm(engine);
      int[] base = tokens(50_000, 3);
      List<int[]> prompts =
          List.of(
              base,
              concat(base, tokens(51_000, 2)),
              concat(tokens(50_000, 1), tokens(52_000, 2)), // splits base after its first page
              tokens(53_000, 4),
              concat(tokens(50_000, 2), tokens(54_000, 3)), // another split, then evictions
              tokens(55_000, 5));
      for (int[] p : prompts) {
        engine.generate(0, p);
        a.events.awaitAssert(
            WAIT, () -> assertThat(a.engineHashes()).isEqualTo(engine.blockSet(0)));
        assertThat(a.held()).isEqualTo(routerKeys(engine.cachedPrefixes(0)));
      }
    }
  }

  /**
   * Batches lost on the PUB socket (past its high-water mark) leave a gap in the sequence; the
   * agent fills it from SGLang's replay ROUTER and keeps its epoch: the picture equals the engine's
   * blocks with no ReplicaCleared published.
   */
  @Test
  void gap_isRepairedThroughReplay_withoutClearingTheReplica() throws Exception {
    try (SglangEngineDouble engine = new SglangEngineDouble(1, PAGE, 256);
        Agent a = start(spec(engine, "gap"), false)) {
      a.serveAndAwait(engine, tokens(60_000, 2));
      long epoch = a.lastEpoch;
      int cleared = a.clearedSince; // the process's own AllBlocksCleared came with its first batch

      engine.dropNext(0, 2);
      engine.generate(0, tokens(61_000, 2)); // lost
      engine.generate(0, tokens(62_000, 3)); // lost
      engine.generate(0, tokens(63_000, 1)); // arrives after the gap
      a.events.awaitAssert(WAIT, () -> assertThat(a.engineHashes()).isEqualTo(engine.blockSet(0)));
      assertThat(a.held()).isEqualTo(routerKeys(engine.cachedPrefixes(0)));
      a.followEvents();
      assertThat(a.clearedSince).as("no ReplicaCleared after the gap").isEqualTo(cleared);
      assertThat(a.lastEpoch).isEqualTo(epoch);
    }
  }

  /**
   * SGLang restarts: seq from 0, empty radix trees, and its AllBlocksCleared only comes with its
   * first prefill. The agent clears the replica before the new process publishes anything, and the
   * new process's blocks are then taken up.
   */
  @Test
  void restart_clearsTheReplica_beforeTheNewProcessPublishes() throws Exception {
    try (SglangEngineDouble engine = new SglangEngineDouble(1, PAGE, 256);
        Agent a = start(spec(engine, "restart"), false)) {
      int[] before = tokens(70_000, 3);
      a.serveAndAwait(engine, before);

      engine.restart(); // nothing published, /health never failed
      a.events.awaitAssert(WAIT, () -> assertThat(a.held()).hasSize(0));

      int[] after = tokens(71_000, 2);
      a.serveAndAwait(engine, after);
      assertThat(a.held()).doesNotContainAnyElementsOf(keys(before));
      assertThat(a.engineHashes()).isEqualTo(engine.blockSet(0));
    }
  }

  // ---- support ----

  /** The replica whose picture holds the longest prefix of {@code prompt}'s router keys. */
  private static int bestReplica(List<Agent> agents, int[] prompt) {
    List<Long> keys = keys(prompt);
    int best = -1;
    int bestLen = -1;
    for (int i = 0; i < agents.size(); i++) {
      Set<Long> held = agents.get(i).held();
      int n = 0;
      while (n < keys.size() && held.contains(keys.get(n))) {
        n++;
      }
      if (n > bestLen) {
        best = i;
        bestLen = n;
      }
    }
    return best;
  }

  /** POSTs {@code prompt} to SGLang's /v1/completions on {@code rank}; the cached tokens. */
  private static int completion(SglangEngineDouble engine, int rank, int[] prompt)
      throws Exception {
    String body =
        JSON.writeValueAsString(java.util.Map.of("model", "m", "prompt", prompt, "max_tokens", 1));
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(engine.baseUrl() + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        io.kvrouter.agent.sglang.SglangRankRouting.withRank(body, rank)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    JsonNode usage = JSON.readTree(r.body()).path("usage");
    return usage.path("prompt_tokens_details").path("cached_tokens").asInt(-1);
  }

  private static final class Agent implements AutoCloseable {
    final ActorRef<AgentRequest> ref;
    final TestProbe<KvEventBatch> events;
    final String replicaId;
    final int rank;
    private int warmups;
    volatile long lastEpoch;
    volatile int clearedSince;

    Agent(ActorRef<AgentRequest> ref, TestProbe<KvEventBatch> events, String replicaId, int rank) {
      this.ref = ref;
      this.events = events;
      this.replicaId = replicaId;
      this.rank = rank;
    }

    @Override
    public void close() {
      testKit.stop(ref, WAIT);
    }

    ReplicaInfo info() {
      TestProbe<ReplicaInfo> reply = testKit.createTestProbe();
      ref.tell(new GetInfo(reply.getRef()));
      return reply.receiveMessage(WAIT);
    }

    private List<KvEvent> snapshot() {
      TestProbe<ReplayReply> reply = testKit.createTestProbe();
      ref.tell(new RequestReplay(replicaId, Long.MIN_VALUE, 0, reply.getRef()));
      SnapshotReply s = (SnapshotReply) reply.receiveMessage(WAIT);
      return List.of(s.snapshot().events());
    }

    /** The router keys the agent holds for its replica. */
    Set<Long> held() {
      return collect(BlocksStored::blockKeys);
    }

    /** The engine hashes the agent holds for its replica. */
    Set<Long> engineHashes() {
      return collect(BlocksStored::engineHashes);
    }

    private Set<Long> collect(java.util.function.Function<BlocksStored, long[]> field) {
      Set<Long> out = new HashSet<>();
      for (KvEvent e : snapshot()) {
        if (e instanceof BlocksStored s) {
          for (long v : field.apply(s)) {
            out.add(v);
          }
        }
      }
      return out;
    }

    private void note(KvEventBatch b) {
      if (!b.replicaId().equals(replicaId)) {
        return;
      }
      if (b.epoch() != lastEpoch) {
        lastEpoch = b.epoch();
        clearedSince = 0;
      }
      for (KvEvent e : b.events()) {
        if (e instanceof ReplicaCleared && b.seq() > 0) {
          clearedSince++;
        }
      }
    }

    /** One-page prompts until the agent holds one: its SUB has joined the PUB. */
    void warm(SglangEngineDouble engine) {
      events.awaitAssert(
          WAIT,
          Duration.ofMillis(100),
          () -> {
            int[] warmup = tokens(900_000 + rank * 1000 + warmups++, 1);
            engine.generate(rank, warmup);
            assertThat(held()).containsAll(keys(warmup));
            return null;
          });
    }

    /** Serves {@code prompt} on this agent's rank and waits until the agent holds its blocks. */
    void serveAndAwait(SglangEngineDouble engine, int[] prompt) {
      warm(engine);
      engine.generate(rank, prompt);
      events.awaitAssert(WAIT, () -> assertThat(held()).containsAll(keys(prompt)));
      followEvents();
    }

    /** Reads the batches published so far, until none came for 200 ms: epoch, ReplicaCleared. */
    void followEvents() {
      while (true) {
        List<KvEventBatch> got;
        try {
          got = List.of(events.receiveMessage(Duration.ofMillis(200)));
        } catch (AssertionError none) {
          return;
        }
        for (KvEventBatch b : got) {
          note(b);
        }
      }
    }
  }

  private static Agent start(ReplicaSpec spec, boolean probe) {
    AgentSettings base = AgentSettings.fromConfig(ConfigFactory.load(), List.of(spec));
    AgentSettings settings =
        base.withHeartbeat(Duration.ofMillis(100), 3)
            .withEngine(SGLANG)
            .withAlignment(base.alignment().withProbe(probe));
    TestProbe<KvEventBatch> events = testKit.createTestProbe();
    String name = spec.info().targetId().replace('#', '-');
    ActorRef<Topic.Command<KvEventBatch>> eventsTopic =
        testKit.spawn(Topics.kvEvents(), "sg-events-" + name);
    ActorRef<Topic.Command<ReplicaLoad>> loadTopic =
        testKit.spawn(Topics.replicaLoad(), "sg-load-" + name);
    eventsTopic.tell(Topic.subscribe(events.getRef()));
    ActorRef<AgentRequest> agent =
        testKit.spawn(ReplicaAgent.create(spec, settings, eventsTopic, loadTopic));
    AgentTestSupport.awaitRegistered(testKit, agent);
    return new Agent(agent, events, spec.info().targetId(), spec.dpRank());
  }

  /** The engine as the operator configures it: rank 0's endpoints, as in --kv-events-config. */
  private static ReplicaSpec spec(SglangEngineDouble engine, String replicaId) {
    return new ReplicaSpec(
        replicaId,
        0,
        "m",
        engine.baseUrl(),
        engine.pageSize(),
        engine.kvEventsEndpoint(),
        engine.replayEndpoint(),
        "",
        ReplicaInfo.BOTH,
        engine.dpSize());
  }

  private static int[] tokens(int from, int pages) {
    return IntStream.range(from, from + pages * PAGE).toArray();
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static List<Long> keys(int[] prompt) {
    List<Long> out = new ArrayList<>();
    for (long k : KEYS.chain(BlocksStored.ROOT, prompt, PAGE, null)) {
      out.add(k);
    }
    return out;
  }

  /** The router key of each cached page, from its token prefix. */
  private static Set<Long> routerKeys(List<int[]> prefixes) {
    Set<Long> out = new HashSet<>();
    for (int[] p : prefixes) {
      List<Long> k = keys(p);
      out.add(k.get(k.size() - 1));
    }
    return out;
  }
}
