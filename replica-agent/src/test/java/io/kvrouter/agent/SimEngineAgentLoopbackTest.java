package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.agent.kvevents.KvEventSubscriber;
import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.engine.EventEncoding;
import io.kvrouter.protocol.engine.ReplayLayout;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngine;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A real sim engine and the agent's event plane (subscriber, bridge, stamping, ring buffer,
 * snapshot) over loopback ZMQ and HTTP, without a Pekko cluster: the blocks the stamped batches
 * describe must be exactly the blocks the engine holds.
 */
class SimEngineAgentLoopbackTest {

  private static final String MODEL = "sim-model";

  /** The test's heartbeat: a quarter of the agent's default second, to keep the waits short. */
  private static final long HEARTBEAT_NANOS = 250_000_000L;

  /** What a tracker would hold for one replica, built only from stamped batches. */
  static final class ReplicaModel {
    long epoch = -1;
    long nextSeq;
    final Map<Long, Long> blocks = new HashMap<>(); // engine hash -> router key
    int epochs;

    synchronized void apply(KvEventBatch b) {
      if (b.epoch() != epoch) {
        assertThat(b.epoch()).as("epochs only grow").isGreaterThan(epoch);
        assertThat(b.seq()).as("a new epoch starts at 0").isZero();
        assertThat(b.events()[0]).isInstanceOf(ReplicaCleared.class);
        epoch = b.epoch();
        nextSeq = 0;
        epochs++;
      }
      assertThat(b.seq()).as("no gap, no duplicate").isEqualTo(nextSeq);
      nextSeq++;
      applyEvents(b.events());
    }

    synchronized void applyEvents(KvEvent[] events) {
      for (KvEvent e : events) {
        if (e instanceof ReplicaCleared) {
          blocks.clear();
        } else if (e instanceof BlocksStored s) {
          for (int i = 0; i < s.engineHashes().length; i++) {
            blocks.put(s.engineHashes()[i], s.blockKeys()[i]);
          }
        } else if (e instanceof BlocksRemoved r) {
          for (long h : r.engineHashes()) {
            blocks.remove(h);
          }
        }
      }
    }

    synchronized Set<Long> hashes() {
      return new HashSet<>(blocks.keySet());
    }

    synchronized Set<Long> keys() {
      return new HashSet<>(blocks.values());
    }
  }

  private static Set<Long> set(long[] a) {
    Set<Long> s = new HashSet<>();
    for (long v : a) {
      s.add(v);
    }
    return s;
  }

  private static void await(BooleanSupplier cond, long millis) {
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (!cond.getAsBoolean() && System.nanoTime() < deadline) {
      try {
        Thread.sleep(5); // polling interval of a bounded await
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * {@code cond}, polled while a healthy check without a process start time goes to {@code sub}
   * every {@link #HEARTBEAT_NANOS}, as the agent's heartbeat sends one (every {@code
   * kvrouter.agent.heartbeat-interval}) while the engine answers its {@code /health}.
   */
  private static BooleanSupplier beating(KvEventSubscriber sub, BooleanSupplier cond) {
    long[] tick = {0};
    long[] next = {System.nanoTime()};
    return () -> {
      long now = System.nanoTime();
      if (now - next[0] >= 0) {
        sub.healthy(++tick[0], Double.NaN);
        next[0] = now + HEARTBEAT_NANOS;
      }
      return cond.getAsBoolean();
    };
  }

  private String complete(SimEngine engine, String prompt, int maxTokens) throws Exception {
    String body =
        "{\"model\":\""
            + MODEL
            + "\",\"prompt\":\""
            + prompt
            + "\",\"max_tokens\":"
            + maxTokens
            + "}";
    HttpResponse<String> r = LoopbackHttp.post(engine.baseUrl() + "/v1/completions", body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return r.body();
  }

  private static String prompt(int i, int len) {
    StringBuilder sb = new StringBuilder();
    while (sb.length() < len) {
      sb.append("request ").append(i).append(" says hello; ");
    }
    return sb.substring(0, len);
  }

  @ParameterizedTest
  @CsvSource({"MAP, WITH_TOPIC", "POSITIONAL, WITHOUT_TOPIC"})
  void stampedBatchesDescribeExactlyTheEngineBlocks_throughEvictionGapAndRestart(
      EventEncoding encoding, ReplayLayout layout) throws Exception {
    SimEngineSettings settings =
        SimEngineSettings.loopback()
            .withModel(MODEL)
            .withEncoding(encoding, layout)
            .withEngine(
                SimEngineConfig.defaults().withNumBlocks(48).withTiming(new MockerTimingModel(50)));
    SimEngine engine = SimEngine.start(settings);
    ReplicaModel model = new ReplicaModel();
    CopyOnWriteArrayList<KvEventBatch> sunk = new CopyOnWriteArrayList<>();
    BatchSink sink =
        b -> {
          sunk.add(b);
          model.apply(b);
        };
    TrackerRouterKeys keys = new TrackerRouterKeys(MODEL);
    ReplicaEventPipeline pipeline = new ReplicaEventPipeline("r1", keys, 16, 1000, 1 << 20, sink);
    String pubEp = engine.kvEventsEndpoint();
    String replayEp = engine.replayEndpoint();
    try (KvEventSubscriber sub =
        new KvEventSubscriber(pubEp, replayEp, "", pipeline, "kv-sub-r1").start()) {
      // 1. fill and overflow the cache: 48 blocks of 16 tokens; 12 prompts of 130 tokens
      for (int i = 0; i < 12; i++) {
        complete(engine, prompt(i, 130), 8);
      }
      SimEngine e1 = engine;
      await(() -> model.hashes().equals(set(e1.cachedBlockHashes())), 10_000);
      assertThat(model.hashes()).isEqualTo(set(engine.cachedBlockHashes())).isNotEmpty();
      assertThat(engine.engine().stats().prefixQueries()).isGreaterThan(0);
      // the router keys are the router's, computed from the tokens, not the engine's hashes
      String last = prompt(11, 130);
      long[] expectedKeys =
          keys.keys(BlocksStored.ROOT, io.kvrouter.sim.ByteTokenizer.encode(last), 16, null);
      assertThat(model.keys()).containsAll(set(expectedKeys));
      assertThat(set(expectedKeys)).doesNotContainAnyElementsOf(model.hashes());
      long evictions =
          sunk.stream()
              .flatMap(b -> java.util.Arrays.stream(b.events()))
              .filter(ev -> ev instanceof BlocksRemoved)
              .count();
      assertThat(evictions).as("the small cache evicted").isPositive();
      long epoch1 = pipeline.epoch();

      // 2. a forced gap: two batches never go out live, the subscriber replays them
      long replaysBefore = sub.replayRequests();
      engine.publisher().dropNextLive(2);
      for (int i = 12; i < 16; i++) {
        complete(engine, prompt(i, 100), 4);
      }
      await(() -> model.hashes().equals(set(e1.cachedBlockHashes())), 10_000);
      assertThat(model.hashes()).isEqualTo(set(engine.cachedBlockHashes()));
      assertThat(sub.replayRequests()).isGreaterThan(replaysBefore);
      assertThat(pipeline.lostBatches()).isZero();
      assertThat(pipeline.epoch()).isEqualTo(epoch1);

      // a snapshot rebuilds the same state from nothing
      ReplicaModel fromSnapshot = new ReplicaModel();
      ReplicaSnapshot snap = pipeline.snapshot();
      fromSnapshot.applyEvents(snap.events());
      assertThat(fromSnapshot.blocks).isEqualTo(model.blocks);
      assertThat(snap.lastSeq()).isEqualTo(pipeline.nextSeq() - 1);

      // 3. engine restart on the same endpoints: sequence regression, new epoch, fresh state
      engine.close();
      engine = startAgain(settings.withEndpoints(0, pubEp, replayEp));
      SimEngine e2 = engine;
      // Requests go to the new engine back to back, so its seq may overtake the old one's
      // before the subscriber reconnects: the restart must show anyway (the dropped connection
      // holds live batches until the replay proves which engine this is).
      for (int i = 0; i < 20; i++) {
        complete(engine, prompt(100 + i, 64), 2);
      }
      // The agent's heartbeat is what tells an interrupted subscriber the engine is back when no
      // live batch follows its reconnect: all 20 requests may be published before the SUB
      // reconnects (a clean CI run on a loaded machine: no batch came, and the subscriber waited,
      // as designed, for a healthy check nobody sent). There is no agent here, so the test beats.
      BooleanSupplier restarted = beating(sub, () -> pipeline.epoch() != epoch1);
      await(restarted, 10_000);
      assertThat(pipeline.epoch()).isGreaterThan(epoch1);
      assertThat(pipeline.engineRestarts()).isEqualTo(1);
      await(beating(sub, () -> model.hashes().equals(set(e2.cachedBlockHashes()))), 10_000);
      assertThat(model.hashes()).isEqualTo(set(engine.cachedBlockHashes())).isNotEmpty();
      assertThat(model.epochs).isEqualTo(2);
      assertThat(pipeline.unresolved()).isZero();
    } finally {
      engine.close();
    }
  }

  private static SimEngine startAgain(SimEngineSettings s) throws Exception {
    RuntimeException last = null;
    for (int i = 0; i < 50; i++) {
      try {
        return SimEngine.start(s);
      } catch (RuntimeException e) {
        last = e;
        await(() -> false, 100);
      }
    }
    throw last;
  }
}
