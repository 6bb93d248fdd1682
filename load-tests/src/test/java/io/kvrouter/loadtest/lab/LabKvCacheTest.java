package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LabKvCacheTest {

  private final List<Long> evicted = new ArrayList<>();
  private final LabKvCache cache = new LabKvCache(4, evicted::add);

  private void cacheTwo(long a, long b) {
    assertThat(cache.allocate()).isTrue();
    assertThat(cache.allocate()).isTrue();
    assertThat(cache.register(a)).isTrue();
    assertThat(cache.register(b)).isTrue();
  }

  @Test
  void freedCachedBlocks_stayFindable_andAreEvictedLeastRecentlyFreedFirst() {
    cacheTwo(11, 12);
    cache.releaseHashed(12); // tail block first, as a finished request releases
    cache.releaseHashed(11);
    assertThat(cache.cachedPrefix(new long[] {11, 12}, 2, new int[2])).isEqualTo(2);
    assertThat(cache.freeBlocks()).isEqualTo(4);

    assertThat(cache.allocate()).isTrue(); // anonymous free blocks go first: nothing evicted
    assertThat(cache.allocate()).isTrue();
    assertThat(evicted).isEmpty();
    assertThat(cache.allocate()).isTrue();
    assertThat(evicted).containsExactly(12L);
    assertThat(cache.cachedPrefix(new long[] {11, 12}, 2, new int[2])).isEqualTo(1);
    assertThat(cache.allocate()).isTrue();
    assertThat(evicted).containsExactly(12L, 11L);
    assertThat(cache.allocate()).isFalse();
  }

  @Test
  void touchedBlocks_areNotEvictable_untilReleased() {
    cacheTwo(21, 22);
    cache.releaseHashed(22);
    cache.releaseHashed(21);
    int[] entries = new int[2];
    assertThat(cache.cachedPrefix(new long[] {21, 22}, 2, entries)).isEqualTo(2);
    assertThat(cache.freeAmongCached(entries, 2)).isEqualTo(2);
    cache.touch(entries, 2);
    assertThat(cache.usedBlocks()).isEqualTo(2);
    assertThat(cache.allocate()).isTrue();
    assertThat(cache.allocate()).isTrue();
    assertThat(cache.allocate()).isFalse();
    assertThat(evicted).isEmpty();
  }

  @Test
  void registeringACachedKeyAgain_leavesTheBlockAnonymous() {
    cacheTwo(31, 32);
    assertThat(cache.allocate()).isTrue();
    assertThat(cache.register(31)).isFalse();
    assertThat(cache.cachedBlocks()).isEqualTo(2);
    cache.releaseAnonymous(1);
    assertThat(cache.usedBlocks()).isEqualTo(2);
  }
}
