package io.kvrouter.ingress.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.ingress.traffic.PeerQueues;
import io.kvrouter.ingress.traffic.QueueHead;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which requests {@link AdmissionQueue#headroom} lets past a replica's busy threshold. */
class AdmissionQueueHeadroomTest {

  static AdmissionQueue queue(PeerQueues peers, int headroom) {
    return new AdmissionQueue(
        10, Duration.ofMinutes(1), Duration.ofMinutes(10), 100, peers, state -> {}, headroom);
  }

  static PeerQueues peers() {
    return new PeerQueues(Duration.ofMinutes(1).toNanos());
  }

  @Test
  void aTenantBelowTheShareOfAWaitingTenant_getsTheHeadroom_theWaitingOneDoesNot() {
    AdmissionQueue q = queue(PeerQueues.NONE, 2);
    for (int i = 0; i < 4; i++) {
      q.started("n" + i, "m", "noisy");
    }
    assertThat(q.headroom("m", 0, "quiet", 1)).as("nobody waits: no need").isZero();

    q.enter("m", 0, "noisy", 10, 1);
    assertThat(q.headroom("m", 0, "quiet", 1)).isEqualTo(2);
    assertThat(q.headroom("m", 0, "noisy", 1)).as("the tenant holding more").isZero();
    assertThat(q.headroom("other-model", 0, "quiet", 1)).as("nobody waits for it").isZero();

    q.started("q1", "m", "quiet");
    q.started("q2", "m", "quiet");
    q.started("q3", "m", "quiet");
    assertThat(q.headroom("m", 0, "quiet", 1))
        .as("with this request it would hold 4, as many as the waiting tenant")
        .isZero();
    q.released("q3");
    assertThat(q.headroom("m", 0, "quiet", 1)).isEqualTo(2);
    assertThat(q.headroom("m", 0, "quiet", 0.5))
        .as("weight 0.5: 3 requests are a share of 6, above the waiting tenant's 4")
        .isZero();
  }

  @Test
  void noHeadroom_whileSomethingMorePressingWaits_orWhenOff() {
    AdmissionQueue q = queue(PeerQueues.NONE, 2);
    for (int i = 0; i < 4; i++) {
      q.started("n" + i, "m", "noisy");
    }
    q.enter("m", 0, "noisy", 10, 1);
    assertThat(q.headroom("m", 5, "quiet", 1))
        .as("a less pressing request never passes a more pressing one")
        .isZero();

    AdmissionQueue off = queue(PeerQueues.NONE, 0);
    off.started("n0", "m", "noisy");
    off.enter("m", 0, "noisy", 10, 1);
    assertThat(off.headroom("m", 0, "quiet", 1)).isZero();
  }

  @Test
  void aBusierTenantWaitingAtAnotherIngress_grantsIt_aMorePressingOneThereWithholdsIt() {
    PeerQueues peers = peers();
    AdmissionQueue q = queue(peers, 1);
    peers.heard(head(0, Map.of("noisy", 1.0), Map.of("noisy", 3)), System.nanoTime());
    assertThat(q.headroom("m", 0, "quiet", 1)).isEqualTo(1);
    assertThat(q.headroom("m", 0, "noisy", 1)).isZero();

    peers.heard(head(0, Map.of("noisy", 1.0), Map.of("noisy", 1)), System.nanoTime());
    q.started("q1", "m", "quiet");
    assertThat(q.headroom("m", 0, "quiet", 1))
        .as("quiet would hold 2 here, noisy holds 1 there")
        .isZero();

    peers.heard(head(-1, Map.of("vip", 1.0), Map.of("noisy", 3)), System.nanoTime());
    assertThat(q.headroom("m", 0, "other", 1)).as("a more pressing request waits there").isZero();
  }

  static QueueHead head(
      Integer priority, Map<String, Double> waiting, Map<String, Integer> running) {
    return new QueueHead("other-ingress", "m", priority, waiting, running);
  }
}
