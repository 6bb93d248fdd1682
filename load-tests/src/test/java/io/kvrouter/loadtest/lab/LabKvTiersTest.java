package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.Tier;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The lab engine's tiers: computed blocks are announced as one run with router keys and engine
 * hashes, GPU stores before the CPU tier's, in gap-free batches; released blocks stay cached for
 * the next request; a macro pass allocates for every request or for none.
 */
class LabKvTiersTest {

  private static final long[] KEYS = {11, 12, 13};

  /** A request of the three blocks of {@link #KEYS} plus one token, all of its prompt computed. */
  private static LabSequence computed(LabKvTiers tiers) {
    LabSequence s = new LabSequence(0, "q", 0, KEYS, 49, 4, 0);
    assertThat(tiers.ensureBlocks(s, 49)).isTrue();
    s.numComputed = 49;
    return s;
  }

  /** Registers what {@code s} has computed, as a pass that scheduled those tokens does. */
  private static void registerComputed(LabKvTiers tiers, LabSequence s) {
    tiers.registerThrough(s, s.numComputed);
  }

  @Test
  void computedBlocks_areAnnouncedGpuFirst_thenOffloaded_inGapFreeBatches() {
    LabKvTiers tiers = new LabKvTiers("r0", 16, 8, 8);
    registerComputed(tiers, computed(tiers));
    KvEventBatch first = tiers.drainBatch();
    assertThat(first.seq()).isZero();
    assertThat(first.events()).hasSize(2);
    BlocksStored gpu = (BlocksStored) first.events()[0];
    BlocksStored cpu = (BlocksStored) first.events()[1];
    assertThat(gpu.tier()).isEqualTo(Tier.GPU);
    assertThat(gpu.parentKey()).isEqualTo(BlocksStored.ROOT);
    assertThat(gpu.blockKeys()).containsExactly(KEYS);
    assertThat(gpu.engineHashes())
        .containsExactly(
            LabKvTiers.engineHash(11), LabKvTiers.engineHash(12), LabKvTiers.engineHash(13));
    assertThat(cpu.tier()).isEqualTo(Tier.CPU);
    assertThat(cpu.blockKeys()).containsExactly(KEYS);
    assertThat(tiers.drainBatch()).as("nothing new").isNull();
    // The same blocks again: cached already, nothing to announce.
    registerComputed(tiers, computed(tiers));
    assertThat(tiers.drainBatch()).isNull();
  }

  @Test
  void releasedBlocks_stayCachedForTheNextRequest() {
    LabKvTiers tiers = new LabKvTiers("r0", 16, 8, 0);
    LabSequence a = computed(tiers);
    registerComputed(tiers, a);
    tiers.release(a);
    assertThat(a.numBlocks).isZero();
    assertThat(tiers.cache().usedBlocks()).isZero();
    LabSequence b = new LabSequence(1, "q1", 0, KEYS, 49, 4, 0);
    int hit = tiers.hit(b, 3);
    assertThat(hit).isEqualTo(3);
    assertThat(tiers.fits(hit, 1)).isTrue();
    tiers.admit(b, hit);
    assertThat(b.numBlocks).isEqualTo(3);
    assertThat(tiers.cache().usedBlocks()).isEqualTo(3);
  }

  @Test
  void ensureAll_allocatesForEveryRequestOrForNone() {
    LabKvTiers tiers = new LabKvTiers("r0", 16, 8, 0);
    LabSequence a = computed(tiers); // 4 blocks
    LabSequence b = new LabSequence(1, "q1", 0, new long[] {21}, 17, 40, 0);
    tiers.ensureBlocks(b, 17); // 2 blocks; 2 left
    b.numComputed = 17;
    assertThat(tiers.ensureAll(List.of(a, b), 32)).isFalse(); // needs 2 + 2
    assertThat(tiers.cache().usedBlocks()).isEqualTo(6);
    assertThat(tiers.ensureAll(List.of(a, b), 16)).isTrue(); // needs 1 + 1
    assertThat(a.numBlocks).isEqualTo(5);
    assertThat(b.numBlocks).isEqualTo(3);
  }

  @Test
  void droppedEvents_neverReachABatch() {
    LabKvTiers tiers = new LabKvTiers("r0", 16, 8, 8);
    registerComputed(tiers, computed(tiers));
    tiers.dropEvents();
    assertThat(tiers.drainBatch()).isNull();
  }
}
