package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.stored;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static io.kvrouter.tracker.KvTrackerCoreTest.tracker;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.WindowBlocks;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A decision credits a hybrid replica only the part of its full-attention match its sliding-window
 * group can reuse, and says whether the hit is full, partial or a miss.
 */
class HybridPlacementTest {

  private static final int WINDOW = 33; // block 16: the 2 blocks before a hit point must be held

  private static KvEventBatch window(String replica, long seq, boolean stored, long... keys) {
    return new KvEventBatch(
        replica, 1, seq, new KvEvent[] {new WindowBlocks(WINDOW, keys, stored)});
  }

  private static Map<String, Decision.Candidate> decide(KvTrackerCore t, long[] prompt) {
    Decision d = t.selectAndReserve(new RouteRequest("q", MODEL, prompt, 165), 0);
    return d.ranked().stream()
        .collect(Collectors.toMap(Decision.Candidate::replicaId, Function.identity()));
  }

  @Test
  void aWindowMissingItsLastBlocksShrinksTheHitToPartial() {
    KvTrackerCore t = tracker("in-1", "hybrid", "plain", "cold");
    long[] prompt = KEYS.keys(tokens(160, 1)); // 10 blocks
    t.apply(stored("hybrid", 0, prompt, 6));
    t.apply(stored("plain", 0, prompt, 6));
    t.apply(window("hybrid", 1, true, Arrays.copyOf(prompt, 6)));
    t.apply(window("hybrid", 2, false, prompt[4], prompt[5]));

    Map<String, Decision.Candidate> c = decide(t, prompt);

    assertThat(c.get("hybrid").hit()).isEqualTo("partial");
    assertThat(c.get("hybrid").matchedBlocks()).isEqualTo(4); // blocks 2 and 3 still held
    assertThat(c.get("hybrid").cachedTokens()).isEqualTo(64);
    assertThat(c.get("plain").hit()).isEqualTo("full");
    assertThat(c.get("plain").cachedTokens()).isEqualTo(96);
    assertThat(c.get("cold").hit()).isEqualTo("miss");
  }

  @Test
  void blocksThatLeftTheWindowEarlierDoNotMatter() {
    KvTrackerCore t = tracker("in-1", "hybrid");
    long[] prompt = KEYS.keys(tokens(160, 1));
    t.apply(stored("hybrid", 0, prompt, 6));
    t.apply(window("hybrid", 1, true, Arrays.copyOf(prompt, 6)));
    t.apply(window("hybrid", 2, false, prompt[0], prompt[1], prompt[2]));

    Decision.Candidate c = decide(t, prompt).get("hybrid");

    assertThat(c.hit()).isEqualTo("full");
    assertThat(c.cachedTokens()).isEqualTo(96);
  }
}
