package io.kvrouter.tracker;

import static io.kvrouter.tracker.KvTrackerCoreTest.KEYS;
import static io.kvrouter.tracker.KvTrackerCoreTest.MODEL;
import static io.kvrouter.tracker.KvTrackerCoreTest.stored;
import static io.kvrouter.tracker.KvTrackerCoreTest.tokens;
import static io.kvrouter.tracker.KvTrackerCoreTest.tracker;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.tracker.steering.Steering;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * LoRA placement as the tracker applies it on top of its policy: a replica with the adapter loaded
 * is preferred when no cache matches, a cache match still wins, and an adapter whose holders are
 * loaded beyond the load penalty spreads to a replica that lacks it.
 */
class AdapterSteeringTest {

  private static Steering adapterOn(Set<String> holders, double penalty) {
    return new Steering(null, 0, 0, null, holders, penalty, false);
  }

  private static RouteRequest request(String id, int salt, int tokens, Steering steering) {
    return new RouteRequest(
        id, MODEL, KEYS.keys(tokens(tokens, salt)), tokens, Set.of(), true, steering);
  }

  @Test
  void withoutACacheMatch_theReplicaHoldingTheAdapterIsChosen_everyTime() {
    KvTrackerCore t = tracker("in-1", "a", "b", "c");
    for (int i = 0; i < 30; i++) {
      Decision d =
          t.selectAndReserve(request("q" + i, 100 + i, 160, adapterOn(Set.of("b"), 4096)), i);
      assertThat(d.chosen()).as("fresh prompt %d", i).isEqualTo("b");
      t.released("q" + i);
    }
  }

  @Test
  void aCacheMatchStillWins_overAHolderWithoutIt() {
    KvTrackerCore t = tracker("in-1", "a", "b", "c");
    long[] prompt = KEYS.keys(tokens(640, 7));
    t.apply(stored("a", 0, prompt, 10)); // a ran the adapter on this prompt (and holds it)
    RouteRequest r =
        new RouteRequest("q", MODEL, prompt, 640, Set.of(), true, adapterOn(Set.of("a", "b"), 64));
    assertThat(t.selectAndReserve(r, 0).chosen()).isEqualTo("a");
  }

  @Test
  void aHotAdapter_spreadsToAReplicaThatLacksIt_onceItsHolderIsQueuedBeyondThePenalty() {
    KvTrackerCore t = tracker("in-1", "a", "b");
    Steering onA = adapterOn(Set.of("a"), 1000);
    // Prompts of 400 tokens queue on a (reserved, not yet prefilled): within the penalty a keeps
    // them, beyond it the next goes to b, which must load the adapter first.
    int onAcount = 0;
    String spreadTo = null;
    for (int i = 0; i < 10 && spreadTo == null; i++) {
      Decision d = t.selectAndReserve(request("q" + i, 200 + i, 400, onA), i);
      if (d.chosen().equals("a")) {
        onAcount++;
      } else {
        spreadTo = d.chosen();
      }
    }
    assertThat(spreadTo).isEqualTo("b");
    assertThat(onAcount)
        .as("a took requests until its queue was more than 1000 tokens beyond b's")
        .isEqualTo(3);
  }

  @Test
  void aRequestForNoAdapter_isLeftToThePolicy() {
    KvTrackerCore t = tracker("in-1", "a", "b", "c");
    java.util.Set<String> chosen = new java.util.HashSet<>();
    for (int i = 0; i < 30; i++) {
      chosen.add(t.selectAndReserve(request("q" + i, 300 + i, 160, Steering.NONE), i).chosen());
      t.released("q" + i);
    }
    assertThat(chosen).hasSizeGreaterThan(1);
  }
}
