package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The adapters an engine holds: loaded once while held, least recently used evicted first. */
class LabLoraSlotsTest {

  @Test
  void anAdapterIsLoadedOnceWhileHeld_andTheLeastRecentlyUsedIsEvicted() {
    LabLoraSlots slots = new LabLoraSlots(2);
    assertThat(slots.use("a")).isTrue();
    assertThat(slots.use("b")).isTrue();
    assertThat(slots.use("a")).isFalse(); // a is now the most recently used
    assertThat(slots.use("c")).isTrue(); // evicts b
    assertThat(slots.holds("a")).isTrue();
    assertThat(slots.holds("b")).isFalse();
    assertThat(slots.holds("c")).isTrue();
    assertThat(slots.use(null)).as("the base model loads nothing").isFalse();
    assertThat(slots.loads()).isEqualTo(3);
  }

  @Test
  void zeroSlots_holdEveryAdapter() {
    LabLoraSlots slots = new LabLoraSlots(0);
    for (int i = 0; i < 100; i++) {
      slots.use("a" + i);
    }
    assertThat(slots.holds("a0")).isTrue();
    assertThat(slots.loads()).isEqualTo(100);
  }
}
