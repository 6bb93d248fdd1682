package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PeerConcurrencyTest {

  /**
   * Three peers decide at the same instants as this router (a burst per tick); their reservations
   * arrive 5 ms later. The router learns the delay and that about three unseen peer decisions
   * accompany each of its own.
   */
  @Test
  void learnsTheDelay_andHowManyPeerDecisionsItCannotSee() {
    PeerConcurrency pc = new PeerConcurrency(30_000, 1_000, 1_000);
    pc.bind("a");
    for (long t = 1_000; t < 200_000; t += 1_000) {
      pc.ownDecided(t);
      for (String peer : new String[] {"b", "c", "d"}) {
        pc.peerDecided(peer, t, t + 5);
      }
    }
    assertThat(pc.routers(200_000)).isEqualTo(4);
    assertThat(pc.delayMillis()).isCloseTo(5, within(1e-9));
    assertThat(pc.concurrentMean(200_000)).isCloseTo(3, within(0.1));
  }

  @Test
  void smoothPeers_farFromOwnDecisions_areNotCountedAsUnseen() {
    PeerConcurrency pc = new PeerConcurrency(30_000, 1_000, 1_000);
    pc.bind("a");
    for (long t = 1_000; t < 200_000; t += 1_000) {
      pc.ownDecided(t);
      pc.peerDecided("b", t + 500, t + 505);
    }
    assertThat(pc.concurrentMean(200_000)).isLessThan(0.05);
  }

  @Test
  void routersDecidingTogether_holdDistinctTurns_thatRotate() {
    String[] ids = {"a", "b", "c", "d", "e"};
    for (long now : new long[] {10_000, 11_000, 12_000}) {
      Set<Integer> turns = new HashSet<>();
      for (String self : ids) {
        PeerConcurrency pc = new PeerConcurrency(30_000, 1_000, 1_000);
        pc.bind(self);
        for (String peer : ids) {
          pc.peerDecided(peer, now - 5, now - 5);
        }
        turns.add(pc.turn(now));
      }
      assertThat(turns).containsExactlyInAnyOrder(0, 1, 2, 3, 4);
    }
    PeerConcurrency pc = new PeerConcurrency(30_000, 1_000, 1_000);
    pc.bind("a");
    pc.peerDecided("b", 1, 1);
    assertThat(pc.turn(1_500)).isNotEqualTo(pc.turn(2_500));
  }

  @Test
  void silentPeers_areForgottenAfterTheHorizon() {
    PeerConcurrency pc = new PeerConcurrency(30_000, 1_000, 1_000);
    pc.bind("a");
    pc.peerDecided("b", 1_000, 1_005);
    assertThat(pc.routers(2_000)).isEqualTo(2);
    assertThat(pc.routers(40_000)).isEqualTo(1);
  }
}
