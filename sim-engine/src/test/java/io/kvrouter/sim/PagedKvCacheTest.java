package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.List;
import org.junit.jupiter.api.Test;

class PagedKvCacheTest {

  private static final int[] TOKENS = new int[16];

  @Test
  void cachedRun_isAnnouncedOnceWithNullParentAndHitsAfterRelease() {
    PagedKvCache cache = new PagedKvCache(4);
    int[] ids = {cache.allocate(), cache.allocate()};
    cache.cacheRun(ids, new long[] {10, 20}, 0, 2, TOKENS, 4, null);
    List<EngineEvent> events = cache.drainEvents();
    assertThat(events).hasSize(1);
    EngineEvent.BlockStored stored = (EngineEvent.BlockStored) events.get(0);
    assertThat(stored.blockHashes()).containsExactly(10, 20);
    assertThat(stored.parentHash()).isNull();
    assertThat(stored.tokenIds()).hasSize(8);
    cache.release(ids, 2);
    assertThat(cache.freeBlocks()).isEqualTo(4);
    assertThat(cache.cachedPrefixBlocks(new long[] {10, 20, 30}, 3)).isEqualTo(2);
    assertThat(cache.cachedPrefixBlocks(new long[] {30, 10}, 2)).isZero();
  }

  @Test
  void allocation_evictsLeastRecentlyFreedAndTailBlockFirst() {
    PagedKvCache cache = new PagedKvCache(4);
    int[] a = {cache.allocate(), cache.allocate()}; // blocks 0,1; free queue [2,3]
    cache.cacheRun(a, new long[] {11, 12}, 0, 2, TOKENS, 4, null);
    cache.release(a, 2); // tail block first: queue [2,3,1,0]
    cache.drainEvents();
    int[] b = {cache.allocate(), cache.allocate(), cache.allocate()};
    assertThat(b).containsExactly(2, 3, 1);
    List<EngineEvent> events = cache.drainEvents();
    assertThat(events).hasSize(1);
    assertThat(((EngineEvent.BlockRemoved) events.get(0)).blockHashes()).containsExactly(12);
    assertThat(cache.contains(11)).isTrue();
    assertThat(cache.contains(12)).isFalse();
    assertThat(cache.cachedPrefixBlocks(new long[] {11, 12}, 2)).isEqualTo(1);
  }

  @Test
  void touchedBlock_isNotEvictable() {
    PagedKvCache cache = new PagedKvCache(2);
    int[] a = {cache.allocate()};
    cache.cacheRun(a, new long[] {7}, 0, 1, TOKENS, 4, null);
    cache.release(a, 1);
    int[] touched = new int[1];
    cache.touch(new long[] {7}, 1, touched);
    assertThat(touched[0]).isEqualTo(a[0]);
    assertThat(cache.usedBlocks()).isEqualTo(1);
    assertThat(cache.allocate()).isNotEqualTo(a[0]);
    assertThat(cache.allocate()).isEqualTo(-1);
    assertThat(cache.contains(7)).isTrue();
    assertThat(cache.usage()).isEqualTo(1.0);
  }

  @Test
  void duplicateHash_isNotRegisteredTwiceAndSplitsTheRun() {
    PagedKvCache cache = new PagedKvCache(4);
    int[] a = {cache.allocate()};
    cache.cacheRun(a, new long[] {5}, 0, 1, TOKENS, 4, null);
    int[] b = {cache.allocate(), cache.allocate()};
    cache.drainEvents();
    cache.cacheRun(b, new long[] {5, 6}, 0, 2, TOKENS, 4, null);
    List<EngineEvent> events = cache.drainEvents();
    assertThat(events).hasSize(1);
    EngineEvent.BlockStored s = (EngineEvent.BlockStored) events.get(0);
    assertThat(s.blockHashes()).containsExactly(6);
    assertThat(s.parentHash()).isEqualTo(5L);
    assertThat(cache.cachedCount()).isEqualTo(2);
  }

  @Test
  void reset_onlyWhenIdle_announcesAllBlocksCleared() {
    PagedKvCache cache = new PagedKvCache(2);
    int[] a = {cache.allocate()};
    cache.cacheRun(a, new long[] {5}, 0, 1, TOKENS, 4, null);
    cache.drainEvents();
    assertThat(cache.resetPrefixCache()).isFalse();
    cache.release(a, 1);
    assertThat(cache.resetPrefixCache()).isTrue();
    assertThat(cache.cachedCount()).isZero();
    assertThat(cache.drainEvents())
        .singleElement()
        .isInstanceOf(EngineEvent.AllBlocksCleared.class);
  }
}
