package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The engine's tiers taken together: a sequence's blocks are taken and given back in the pool and
 * the window group at once, its computed blocks registered in every tier, and the events handed out
 * GPU first, then the window group's, then the CPU tier's.
 */
class SimKvTiersTest {

  private static final TimingModel FLAT = (prefill, decode, active, total) -> 1;

  private static SimEngineConfig config(int cpuBlocks, int window) {
    return new SimEngineConfig(4, 8, 8, 64, "0", FLAT)
        .withCpuTier(cpuBlocks, 0)
        .withSlidingWindow(window);
  }

  /** A sequence of {@code blocks} full blocks of distinct tokens, hashed, all computed. */
  private static SimSequence computed(String id, int blocks, int offset) {
    int[] tokens = IntStream.range(0, blocks * 4).map(i -> i + offset).toArray();
    SimSequence seq = new SimSequence(SimRequest.of(id, tokens, 1), 0);
    seq.extendHashes(new VllmBlockHasher("0"), 4);
    seq.numComputed = tokens.length;
    return seq;
  }

  /** Runs a sequence of {@code blocks} blocks through {@code tiers}: cached, then released. */
  private static SimSequence servedAndReleased(SimKvTiers tiers, int blocks) {
    SimSequence a = cached(tiers, computed("a", blocks, 0));
    tiers.release(a);
    return a;
  }

  /** Allocates and registers {@code seq}'s computed blocks in {@code tiers}. */
  private static SimSequence cached(SimKvTiers tiers, SimSequence seq) {
    assertThat(tiers.ensureBlocks(seq, seq.numComputed)).isTrue();
    tiers.registerComputed(seq);
    return seq;
  }

  @Test
  void registeredBlocks_areAnnouncedGpuThenWindowThenCpu() {
    SimKvTiers tiers = new SimKvTiers(config(16, 8));
    SimSequence seq = cached(tiers, computed("a", 2, 0));
    List<EngineEvent> events = tiers.drainEvents();
    assertThat(events).hasSize(3);
    EngineEvent.BlockStored gpu = (EngineEvent.BlockStored) events.get(0);
    EngineEvent.BlockStored window = (EngineEvent.BlockStored) events.get(1);
    EngineEvent.BlockStored cpu = (EngineEvent.BlockStored) events.get(2);
    assertThat(gpu.medium()).isNull();
    assertThat(window.group()).isEqualTo(SlidingWindowGroup.GROUP);
    assertThat(cpu.medium()).isEqualTo("CPU");
    assertThat(gpu.blockHashes()).containsExactly(seq.hashes[0], seq.hashes[1]);
    assertThat(seq.numRegistered).isEqualTo(2);
    assertThat(tiers.drainEvents()).isEmpty();
  }

  @Test
  void releasedSequence_leavesItsBlocksCachedAndReusable() {
    SimKvTiers tiers = new SimKvTiers(config(0, 0));
    SimSequence a = servedAndReleased(tiers, 2);
    assertThat(a.numBlocks).isZero();
    assertThat(tiers.gpu().usedBlocks()).isZero();

    SimSequence b = computed("b", 3, 0); // the same two leading blocks, then one more
    int hit = tiers.hit(b, 2);
    assertThat(hit).isEqualTo(2);
    assertThat(tiers.fits(b, hit, 1)).isTrue();
    tiers.admit(b, hit, 0);
    assertThat(tiers.cachedPrefixBlockIds(b.hashes)).hasSize(2);
    assertThat(b.numBlocks).isEqualTo(2);
    assertThat(tiers.gpu().usedBlocks()).isEqualTo(2);
  }

  @Test
  void cpuTier_offersTheRunAfterTheGpuHit_butNotBesideAWindowGroup() {
    SimKvTiers plain = new SimKvTiers(config(16, 0));
    SimKvTiers hybrid = new SimKvTiers(config(16, 8));
    for (SimKvTiers tiers : List.of(plain, hybrid)) {
      servedAndReleased(tiers, 2);
    }
    SimSequence b = computed("b", 2, 0);
    assertThat(plain.loadable(b, 0, 2)).isEqualTo(2); // as if the GPU had evicted both
    assertThat(plain.loadable(b, 2, 2)).isZero(); // the GPU hit covers both
    assertThat(hybrid.loadable(b, 0, 2)).isZero();
  }

  @Test
  void reset_isRefusedWhileBlocksAreInUse() {
    SimKvTiers tiers = new SimKvTiers(config(0, 0));
    SimSequence a = cached(tiers, computed("a", 1, 0));
    tiers.drainEvents();
    assertThat(tiers.resetPrefixCache()).isNull();
    tiers.release(a);
    assertThat(tiers.resetPrefixCache()).containsExactly(new EngineEvent.AllBlocksCleared());
    assertThat(tiers.hit(computed("b", 1, 0), 1)).isZero();
  }
}
