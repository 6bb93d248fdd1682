package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaCleared;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Engine faults users of other routers reported, each against {@link VllmEngineDouble} (vLLM's
 * behaviour, not kvrouter's simulated engine), with the agent's picture of the replica checked
 * right afterwards: what it holds is what its snapshot gives every tracker (docs/kv-events.md,
 * "Engine faults").
 */
class EngineFaultsTest {

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final int BS = 16;
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final RouterKeyFunction KEYS = new TrackerRouterKeys("m");

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /**
   * AIBrix #2287: vLLM queues AllBlocksCleared at {@code /reset_prefix_cache} and publishes it with
   * the next step's batch. Until then the replica's picture is the old one; the batch that brings
   * it clears the replica before the new blocks apply, in that order within one stamped batch.
   */
  @Test
  void idleReset_isSeenWithTheNextBatch_whichClearsTheReplicaBeforeItsNewBlocks() throws Exception {
    try (VllmEngineDouble engine = new VllmEngineDouble(1, BS, true);
        SnapshotAgent a = start(engine.spec("reset", 0), ConfigFactory.load())) {
      int[] first = tokens(1000, 3);
      storeAndAwait(a, engine, 0, first);

      engine.resetPrefixCache(); // idle: nothing is published
      assertThat(engine.complete(0, first)).isZero(); // (only to show the engine lost the blocks)
      // that request's step published [AllBlocksCleared, BlockStored(first)]
      KvEventBatch flushed =
          a.events
              .fishForMessage(
                  WAIT,
                  b ->
                      b.replicaId().equals(a.replicaId) && b.events().length > 1
                          ? FishingOutcomes.complete()
                          : FishingOutcomes.continueAndIgnore())
              .get(0);
      assertThat(flushed.events()[0]).isInstanceOf(ReplicaCleared.class);
      assertThat(flushed.events()[1]).isInstanceOf(BlocksStored.class);
      assertThat(a.held()).containsExactlyInAnyOrderElementsOf(keys(first));

      int[] second = tokens(2000, 2);
      engine.resetPrefixCache();
      assertThat(a.held()) // the window: the engine is empty, the picture still holds `first`
          .containsExactlyInAnyOrderElementsOf(keys(first));
      engine.complete(0, second);
      a.events.awaitAssert(
          WAIT, () -> assertThat(a.held()).containsExactlyInAnyOrderElementsOf(keys(second)));
    }
  }

  /**
   * llm-d-router #2853: a restart resets the sequence and says nothing, and without a replay
   * endpoint nothing can show the engine is the same process. Here the engine restarts faster than
   * a health interval and exports no start time (prometheus_client's multiprocess mode): the
   * dropped ZMQ connection alone must clear the replica, before the new process publishes anything.
   */
  @Test
  void restartWithoutReplayOrStartTime_clearsTheReplicaBeforeTheNewProcessPublishes()
      throws Exception {
    try (VllmEngineDouble engine = new VllmEngineDouble(1, BS, false);
        SnapshotAgent a = start(engine.spec("restart", 0), ConfigFactory.load())) {
      int[] before = tokens(3000, 3);
      storeAndAwait(a, engine, 0, before);

      engine.restart(); // seq from 0, empty cache, nothing announced, /health never failed
      a.events.awaitAssert(WAIT, () -> assertThat(a.held()).hasSize(0));

      int[] after = tokens(4000, 2);
      storeAndAwait(a, engine, 0, after); // the new process's stream is taken from its seq 0
      assertThat(a.held()).doesNotContainAnyElementsOf(keys(before));
    }
  }

  /**
   * llm-d #1736/#1738: one data-parallel rank's engine core is gone (its event socket closed, its
   * stream silent) while the front-end and the other rank serve on, with the process start time
   * unchanged (it is the front-end's). The gone rank's blocks leave the picture; the other's stay,
   * and it goes on serving and storing.
   */
  @Test
  void oneDataParallelRankGone_itsBlocksLeave_theOtherRankKeepsItsBlocksAndServes()
      throws Exception {
    try (VllmEngineDouble engine = new VllmEngineDouble(2, BS, true)) {
      rankOneGone_itsBlocksLeave_rankZeroServes(engine, "dp", ConfigFactory.load());
    }
  }

  /**
   * The same with a replay endpoint per rank: the gone rank's replay goes unanswered, which nothing
   * can tell from a slow answer, so its blocks leave once the interruption has waited {@code
   * give-up-after} (shortened here) for an answer; the other rank keeps its blocks and serves.
   */
  @Test
  void oneDataParallelRankWithReplayGone_itsBlocksLeaveAfterGiveUpAfter_theOtherRankServes()
      throws Exception {
    Config quick =
        ConfigFactory.parseString(
                "kvrouter.agent.kv-events { give-up-after = 1s, replay-timeout = 300ms }")
            .withFallback(ConfigFactory.load());
    try (VllmEngineDouble engine = new VllmEngineDouble(2, BS, true, true)) {
      rankOneGone_itsBlocksLeave_rankZeroServes(engine, "dpr", quick);
    }
  }

  /** Both ranks of {@code engine} store, rank 1 is lost, rank 0 serves on. */
  private static void rankOneGone_itsBlocksLeave_rankZeroServes(
      VllmEngineDouble engine, String replicaId, Config config) {
    try (SnapshotAgent r0 = start(engine.spec(replicaId, 0), config);
        SnapshotAgent r1 = start(engine.spec(replicaId, 1), config)) {
      int[] shared = tokens(5000, 3);
      storeAndAwait(r0, engine, 0, shared);
      storeAndAwait(r1, engine, 1, shared);
      Set<Long> rank0 = r0.held();

      engine.stopRank(1);
      r1.events.awaitAssert(WAIT, () -> assertThat(r1.held()).hasSize(0));
      assertThat(r0.held()).isEqualTo(rank0);

      int[] more = tokens(6000, 2);
      storeAndAwait(r0, engine, 0, more);
      assertThat(r0.held()).containsAll(rank0).containsAll(keys(more));
    }
  }

  private static final AtomicInteger warmups = new AtomicInteger();

  /**
   * Serves {@code prompt} on {@code rank} and waits until the agent holds its blocks. Serves new
   * one-block prompts first until the agent holds one, so its SUB has joined (a ZMQ subscriber may
   * join after the first batches) before the prompt's only batch is published.
   */
  private static void storeAndAwait(
      SnapshotAgent a, VllmEngineDouble engine, int rank, int[] prompt) {
    a.events.awaitAssert(
        WAIT,
        Duration.ofMillis(100),
        () -> {
          int[] warmup = tokens(900_000 + rank * 1000 + warmups.getAndIncrement(), 1);
          engine.complete(rank, warmup);
          assertThat(a.held()).containsAll(keys(warmup));
          return null;
        });
    engine.complete(rank, prompt);
    a.events.awaitAssert(WAIT, () -> assertThat(a.held()).containsAll(keys(prompt)));
  }

  private static SnapshotAgent start(ReplicaSpec spec, Config config) {
    return SnapshotAgent.start(testKit, spec, config);
  }

  /** {@code blocks} full blocks of tokens from {@code from} on. */
  private static int[] tokens(int from, int blocks) {
    return IntStream.range(from, from + blocks * BS).toArray();
  }

  private static List<Long> keys(int[] prompt) {
    List<Long> out = new ArrayList<>();
    for (long k : KEYS.chain(BlocksStored.ROOT, prompt, BS, null)) {
      out.add(k);
    }
    return out;
  }
}
