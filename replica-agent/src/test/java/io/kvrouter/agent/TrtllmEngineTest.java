package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;
import io.kvrouter.testing.TrtllmEngineDouble;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The agent in front of {@link TrtllmEngineDouble} (TensorRT-LLM's event format, hashing, cache
 * levels and restarts, not kvrouter's simulated engine), with {@code engine.kind = tensorrt-llm}:
 * its events are polled from {@code /kv_cache_events} and the agent's picture of the replica, what
 * its snapshot gives every tracker, is checked against the engine's own blocks after each fault.
 */
class TrtllmEngineTest {

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final int BS = 16;
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final RouterKeyFunction KEYS = new TrackerRouterKeys("m");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Config TRTLLM =
      ConfigFactory.parseString("kvrouter.agent.engine.kind = tensorrt-llm")
          .withFallback(ConfigFactory.load());

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /**
   * Through evictions, offloads to host memory (level 1), onboards back and partial blocks, the
   * agent holds per tier exactly the engine's full blocks: GPU blocks in the GPU tier, host-memory
   * blocks in the CPU tier, no partial block anywhere.
   */
  @Test
  void indexEqualsTheEnginesOwnBlocks_perTier_throughOffloadOnboardAndEviction() throws Exception {
    try (TrtllmEngineDouble engine = new TrtllmEngineDouble("m", BS, 8, 4, 10_000);
        SnapshotAgent a = start(engine, "trt-tiers")) {
      int[] first = tokens(1000, 3, 5);
      engine.complete(first);
      for (int i = 0; i < 4; i++) {
        engine.complete(tokens(2000 + 100 * i, 2, 3)); // pushes `first` out to host memory
      }
      engine.complete(first); // onboards what host memory still holds
      engine.complete(tokens(3000, 2, 0)); // a prompt of whole blocks: its last one at release
      assertThat(engine.fullBlocks(1)).isNotEmpty(); // (the scenario reached host memory)
      a.events.awaitAssert(
          WAIT,
          () -> {
            assertThat(a.held(Tier.GPU)).isEqualTo(keysOf(engine.fullBlocks(0)));
            assertThat(a.held(Tier.CPU)).isEqualTo(keysOf(engine.fullBlocks(1)));
            return null;
          });
    }
  }

  /**
   * Events lost between two polls (another client drained {@code /kv_cache_events}, or the queue
   * overflowed {@code event_buffer_max_size}): among them the removal of the first prompt's blocks.
   * The jump in event ids clears the replica, which is then rebuilt from the events that follow: it
   * never keeps blocks the engine evicted meanwhile, and holds exactly what was stored since
   * (TensorRT-LLM has no replay or snapshot to learn what the lost events stored).
   */
  @Test
  void gapInEventIds_clearsTheReplica_whichIsRebuiltFromTheEventsThatFollow() throws Exception {
    try (TrtllmEngineDouble engine = new TrtllmEngineDouble("m", BS, 6, 0, 10_000);
        SnapshotAgent a = start(engine, "trt-gap")) {
      int[] first = tokens(1000, 3, 5);
      storeAndAwait(a, engine, first);

      assertThat(engine.completeUnseen(tokens(2000, 5, 5))).isPositive(); // evicts `first`
      int[] after = tokens(3000, 2, 5);
      engine.complete(after);
      a.events.awaitAssert(
          WAIT, () -> assertThat(a.held(Tier.GPU)).isEqualTo(new HashSet<>(keys(after))));
      assertThat(keysOf(engine.fullBlocks(0))).containsAll(a.held(Tier.GPU));
    }
  }

  /**
   * An engine restart says nothing and {@code /health} never fails; the new process's event ids
   * start again at 0 with its {@code created} events, which clear the replica before its blocks.
   */
  @Test
  void restart_clearsTheReplica_beforeTheNewProcessStores() throws Exception {
    try (TrtllmEngineDouble engine = new TrtllmEngineDouble("m", BS, 64, 0, 10_000);
        SnapshotAgent a = start(engine, "trt-restart")) {
      int[] before = tokens(1000, 3, 5);
      storeAndAwait(a, engine, before);

      engine.restart();
      a.events.awaitAssert(WAIT, () -> assertThat(a.held(Tier.GPU)).hasSize(0));

      int[] after = tokens(4000, 2, 5);
      storeAndAwait(a, engine, after);
      assertThat(a.held(Tier.GPU)).isEqualTo(keysOf(engine.fullBlocks(0)));
    }
  }

  /**
   * Two engines, prompts spread over them once; then each prompt goes where the agents' pictures
   * hold the longest prefix of its keys, over the engines' OpenAI routes, and every one of them is
   * served from cache there (the engine's own {@code cached_tokens}).
   */
  @Test
  void repeatedPrompts_goWhereThePictureHoldsThem_andHitTheEnginesCache() throws Exception {
    try (TrtllmEngineDouble e0 = new TrtllmEngineDouble("m", BS, 64, 0, 10_000);
        TrtllmEngineDouble e1 = new TrtllmEngineDouble("m", BS, 64, 0, 10_000);
        SnapshotAgent a0 = start(e0, "trt-r0");
        SnapshotAgent a1 = start(e1, "trt-r1")) {
      TrtllmEngineDouble[] engines = {e0, e1};
      SnapshotAgent[] agents = {a0, a1};
      List<int[]> prompts = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        int[] p = tokens(10_000 * (i + 1), 2 + i % 3, 7);
        prompts.add(p);
        assertThat(completion(engines[i % 2], p)).isZero();
      }
      for (int i = 0; i < prompts.size(); i++) {
        int[] p = prompts.get(i);
        SnapshotAgent owner = agents[i % 2];
        owner.events.awaitAssert(WAIT, () -> assertThat(owner.held(Tier.GPU)).containsAll(keys(p)));
      }
      for (int i = 0; i < prompts.size(); i++) {
        int[] p = prompts.get(i);
        int best = prefix(a0.held(Tier.GPU), p) >= prefix(a1.held(Tier.GPU), p) ? 0 : 1;
        assertThat(best).isEqualTo(i % 2);
        assertThat(completion(engines[best], p)).isEqualTo(keys(p).size() * BS);
      }
      assertThat(chat(e0, "hello")).isZero(); // the chat route serves, and caches
      assertThat(chat(e0, "hello")).isPositive();
    }
  }

  /**
   * A TensorRT-LLM replica whose kv-events endpoint is a ZMQ one (KV cache manager V2's streaming
   * publisher, vLLM's framing) is subscribed to, not polled: a ZMQ publisher's blocks reach the
   * agent's picture with {@code engine.kind = tensorrt-llm}.
   */
  @Test
  void zmqEndpoint_ofATensorrtLlmReplica_isSubscribedTo() throws Exception {
    try (VllmEngineDouble engine = new VllmEngineDouble(1, BS, false);
        SnapshotAgent a = SnapshotAgent.start(testKit, engine.spec("trt-zmq", 0), TRTLLM)) {
      int[] next = {0};
      a.events.awaitAssert(
          WAIT,
          Duration.ofMillis(100),
          () -> {
            int[] prompt = IntStream.range(0, BS).map(t -> 70_000 + next[0] * BS + t).toArray();
            next[0]++;
            engine.complete(0, prompt); // a SUB may join after the first batches: serve anew
            assertThat(a.held(Tier.GPU))
                .contains(KEYS.chain(BlocksStored.ROOT, prompt, BS, null)[0]);
            return null;
          });
    }
  }

  /** Leading keys of {@code prompt} that {@code held} holds. */
  private static int prefix(Set<Long> held, int[] prompt) {
    int n = 0;
    for (long k : keys(prompt)) {
      if (!held.contains(k)) {
        break;
      }
      n++;
    }
    return n;
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** {@code POST /v1/completions} with token ids; the cached tokens the engine reports. */
  private static int completion(TrtllmEngineDouble engine, int[] prompt) throws Exception {
    return post(
        engine,
        "/v1/completions",
        JSON.createObjectNode()
            .put("model", "m")
            .put("max_tokens", 1)
            .set("prompt", JSON.valueToTree(prompt)));
  }

  private static int chat(TrtllmEngineDouble engine, String text) throws Exception {
    var req = JSON.createObjectNode().put("model", "m").put("max_tokens", 1);
    req.putArray("messages").addObject().put("role", "user").put("content", text.repeat(20));
    return post(engine, "/v1/chat/completions", req);
  }

  private static int post(TrtllmEngineDouble engine, String path, JsonNode body) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(engine.baseUrl() + path))
                .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                .header("Content-Type", "application/json")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return JSON.readTree(r.body())
        .path("usage")
        .path("prompt_tokens_details")
        .path("cached_tokens")
        .asInt();
  }

  /** Serves {@code prompt} and waits until the agent holds its full blocks. */
  private static void storeAndAwait(SnapshotAgent a, TrtllmEngineDouble engine, int[] prompt) {
    engine.complete(prompt);
    a.events.awaitAssert(WAIT, () -> assertThat(a.held(Tier.GPU)).containsAll(keys(prompt)));
  }

  /** The agent of replica {@code replicaId}, engine {@code engine}: its events polled over HTTP. */
  private static SnapshotAgent start(TrtllmEngineDouble engine, String replicaId) {
    String url = engine.baseUrl();
    return SnapshotAgent.start(
        testKit, new ReplicaSpec(replicaId, 0, "m", url, BS, url, null, ""), TRTLLM);
  }

  /** {@code blocks} full blocks of tokens from {@code from} on, then {@code extra} more. */
  private static int[] tokens(int from, int blocks, int extra) {
    return IntStream.range(from, from + blocks * BS + extra).toArray();
  }

  /**
   * The router keys of the blocks TensorRT-LLM stores for {@code prompt} (all but its last token).
   */
  private static List<Long> keys(int[] prompt) {
    int full = (prompt.length - 1) / BS;
    List<Long> out = new ArrayList<>();
    for (long k :
        KEYS.chain(BlocksStored.ROOT, java.util.Arrays.copyOf(prompt, full * BS), BS, null)) {
      out.add(k);
    }
    return out;
  }

  /** The router key of the last block of each prefix. */
  private static Set<Long> keysOf(Map<Long, int[]> prefixes) {
    Set<Long> out = new HashSet<>();
    for (int[] p : prefixes.values()) {
      long[] chain = KEYS.chain(BlocksStored.ROOT, p, BS, null);
      out.add(chain[chain.length - 1]);
    }
    return out;
  }
}
