package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.WindowBlocks;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.sim.Emission;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineCore;
import io.kvrouter.sim.SimRequest;
import io.kvrouter.sim.StepResult;
import io.kvrouter.sim.TimingModel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A simulated hybrid model (full-attention group 0, sliding-window group 1): both groups store the
 * same hashes, the window group frees blocks that left a running request's window, so they are
 * evicted first and published as group-1 removals, and a prefix hit counts only where the window
 * group still holds the window before it (vLLM's {@code SlidingWindowManager}).
 */
class SlidingWindowSimTest {

  private static final TimingModel LINEAR =
      (prefill, decode, active, total) -> 1000 + 10L * prefill + 100L * decode;

  /** Block 16, window 33 tokens: a hit needs the 2 blocks before it in the window group. */
  private static SimEngineConfig config(int blocks, int window) {
    return new SimEngineConfig(16, blocks, 8, 8192, "0", LINEAR).withSlidingWindow(window);
  }

  private static int[] prompt(int n, int offset) {
    return IntStream.range(0, n).map(i -> i + offset).toArray();
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static List<Emission> runToIdle(SimEngineCore core, long start) {
    List<Emission> out = new ArrayList<>();
    long now = start;
    for (int guard = 0; core.hasWork() && guard < 100_000; guard++) {
      StepResult r = core.step(now);
      out.addAll(r.emissions());
      now = r.endMicros();
    }
    return out;
  }

  private static int run(SimEngineCore core, String id, int[] tokens) {
    core.submit(SimRequest.of(id, tokens, 1), 0);
    return runToIdle(core, 0).get(0).cachedPromptTokens();
  }

  @Test
  void bothGroupsStoreTheSameHashesAndAWholePromptStillHits() {
    SimEngineCore core = new SimEngineCore(config(64, 33));
    List<EngineEvent> events = new ArrayList<>();
    core.setKvEventListener((e, at) -> events.addAll(e));
    int[] a = prompt(200, 1000);
    assertThat(run(core, "a", a)).isZero();
    List<Long> group0 = new ArrayList<>();
    List<Long> group1 = new ArrayList<>();
    for (EngineEvent e : events) {
      if (e instanceof EngineEvent.BlockStored s) {
        for (long h : s.blockHashes()) {
          (s.group() == 1 ? group1 : group0).add(h);
        }
        if (s.group() == 1) {
          assertThat(s.groupKind()).isEqualTo("sliding_window");
          assertThat(s.slidingWindow()).isEqualTo(33);
        }
      }
    }
    assertThat(group0).hasSize(12).isEqualTo(group1);
    // Blocks that left the window are freed but stay cached: the same prompt hits all 12 blocks.
    assertThat(run(core, "a2", a)).isEqualTo(192);
  }

  @Test
  void windowGroupEvictsOutOfWindowBlocksFirstAndTheHitShrinks() {
    List<EngineEvent> events = new ArrayList<>();
    SimEngineCore hybrid = new SimEngineCore(config(32, 33));
    hybrid.setKvEventListener((e, at) -> events.addAll(e));
    SimEngineCore plain = new SimEngineCore(config(32, 0));
    int[] a = prompt(200, 1000);
    int[] b = prompt(408, 50_000);
    int[] c = concat(Arrays.copyOf(a, 96), prompt(40, 90_000));
    for (SimEngineCore core : List.of(hybrid, plain)) {
      run(core, "a", a);
      run(core, "b", b); // 25 more blocks: the window group (32 blocks) drops 5 of a's
    }
    long[] aHashes = hybrid.blockHashes(a, null, null);
    List<EngineEvent> beforeC = List.copyOf(events);
    List<Long> removed1 = new ArrayList<>();
    for (EngineEvent e : events) {
      if (e instanceof EngineEvent.BlockRemoved r && r.group() == 1) {
        for (long h : r.blockHashes()) {
          removed1.add(h);
        }
      }
    }
    // a's blocks 0..9 left its window first, so the window group evicted a's head, 0..4.
    assertThat(removed1)
        .containsExactly(aHashes[0], aHashes[1], aHashes[2], aHashes[3], aHashes[4]);
    // Group 0 still holds a's first 6 blocks (it evicted a's tail), so c's full-attention match is
    // 6 blocks; the window group lacks block 4, so a hit of 6 blocks is not reusable, nor any
    // shorter one: 0 tokens. The same engine without the window group reuses all 96.
    assertThat(plain.blockHashes(c, null, null)[5]).isEqualTo(aHashes[5]);
    assertThat(run(plain, "c", c)).isEqualTo(96);
    assertThat(run(hybrid, "c", c)).isZero();

    // The agent turns group 1 into WindowBlocks under the router keys group 0's stores gave, and
    // never lets it touch the prefix index.
    EngineKeyBridge bridge = new EngineKeyBridge(new TrackerRouterKeys("m"), 16, 1000);
    List<Long> fullKeys = new ArrayList<>();
    List<Long> windowStored = new ArrayList<>();
    List<Long> windowDropped = new ArrayList<>();
    int group0Removals = 0;
    for (EngineEvent e : beforeC) {
      if (e instanceof EngineEvent.BlockRemoved r && r.group() == 0) {
        group0Removals++;
      }
    }
    int removals = 0;
    for (KvEvent k : bridge.translate(beforeC)) {
      if (k instanceof BlocksStored s) {
        for (long key : s.blockKeys()) {
          fullKeys.add(key);
        }
      } else if (k instanceof WindowBlocks w) {
        assertThat(w.windowTokens()).isEqualTo(33);
        for (long key : w.blockKeys()) {
          (w.stored() ? windowStored : windowDropped).add(key);
        }
      } else if (k instanceof BlocksRemoved r) {
        removals += r.engineHashes().length;
      }
    }
    assertThat(removals).isEqualTo(group0Removals);
    assertThat(windowStored).containsExactlyInAnyOrderElementsOf(fullKeys);
    assertThat(windowDropped).containsExactlyElementsOf(fullKeys.subList(0, 5));
    assertThat(bridge.windowBlocks()).isEqualTo(fullKeys.size() - 5);
    // A snapshot (a late tracker's bootstrap) carries the window group's holdings too.
    KvEvent[] snapshot = bridge.snapshot();
    assertThat(snapshot[snapshot.length - 1])
        .isEqualTo(
            new WindowBlocks(
                33,
                fullKeys.subList(5, fullKeys.size()).stream().mapToLong(k -> k).toArray(),
                true));
  }
}
