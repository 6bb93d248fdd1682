package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import org.junit.jupiter.api.Test;

class DynamoKvPolicyTest {

  /**
   * The example: replica 0 holds the whole 100-block prompt, but its own in-flight requests
   * hold 120 distinct blocks; Dynamo's logit there is 0 prefill + 220 decode blocks against 100 +
   * 100 on the cold, idle replica 1, so it goes cold. kvrouter predicts the first token there after
   * computing 1,600 tokens (about 42 ms) against one pass with a decode step on the cached replica
   * (about 22 ms), and stays on the cache.
   */
  @Test
  void choosesAColdReplica_overOneWhoseCachedPrefixIsOutweighedByInFlightBlocks() {
    Fixture f = new Fixture(2);
    long[] prompt = Fixture.prompt(1, 100);
    f.cache(0, prompt, 100, Tier.GPU);
    Policy dynamo = Fixture.policy("dynamo_kv", 1);
    for (int i = 0; i < 3; i++) {
      f.running(dynamo, "busy-" + i, Fixture.prompt(1_000 * (i + 1), 40), 0);
    }
    f.inFlight[0] = 3;
    f.decode[0] = 120 * Fixture.BS; // the same three requests, as the ledger counts them

    assertThat(f.rank(dynamo, prompt)[0]).isEqualTo(1);
    assertThat(f.kvrouterPick(prompt)).isEqualTo(0);
  }

  /**
   * Two running requests with the same 30 blocks count 30 active blocks, and a third with those
   * blocks adds none: 30 prefill + 30 decode on replica 0 against 30 + 55 on replica 1. Summing
   * every request's prompt (the old baseline) would give replica 0 120 and pick replica 1.
   */
  @Test
  void countsBlocksSharedByConcurrentRequestsOnce_andAddsOnlyTheNewRequestsInactiveBlocks() {
    Fixture f = new Fixture(2);
    long[] shared = Fixture.prompt(500, 30);
    Policy dynamo = Fixture.policy("dynamo_kv", 1);
    f.running(dynamo, "a", shared, 0);
    f.running(dynamo, "b", shared, 0);
    f.running(dynamo, "c", Fixture.prompt(9_000, 25), 1);

    assertThat(f.rank(dynamo, shared)[0]).isEqualTo(0);

    dynamo.onReleased("a", 0);
    dynamo.onReleased("b", 0); // replica 0 idle: 30 + 30 against 30 + 55
    assertThat(f.rank(dynamo, shared)[0]).isEqualTo(0);
  }

  /**
   * Both replicas idle and cold for this prompt: equal logits. Dynamo's main branch draws one of
   * them at random (reservoir sampling in {@code minimum_cost_index}), so over 20 seeds both are
   * chosen although replica 1's tree is larger; the 1.1 line takes the smaller tree, replica 0,
   * every time.
   */
  @Test
  void equalLogits_goToARandomWorker_whereTheV1_1LineTookTheSmallestTree() {
    Fixture f = new Fixture(2);
    f.cache(1, Fixture.prompt(77, 4), 4, Tier.GPU); // replica 1's tree is larger
    long[] prompt = Fixture.prompt(500, 30);
    java.util.Set<Integer> chosen = new java.util.HashSet<>();
    for (int seed = 0; seed < 20; seed++) {
      chosen.add(f.rank(Fixture.policy("dynamo_kv", seed), prompt)[0]);
      assertThat(f.rank(Fixture.policy("dynamo_kv_v1_1", seed), prompt)[0])
          .as("seed %d", seed)
          .isEqualTo(0);
    }
    assertThat(chosen).containsExactlyInAnyOrder(0, 1);
  }

  @Test
  void uncachedTokensOfOwnRequestsStillInPrefill_countAsPrefillBlocks() {
    Fixture f = new Fixture(2);
    long[] prompt = Fixture.prompt(1, 10);
    f.cache(0, prompt, 10, Tier.GPU);
    Policy dynamo = Fixture.policy("dynamo_kv", 1);
    f.prefill[0] = 9 * Fixture.BS; // r0 = 9 + 10 = 19 < r1 = 10 + 10
    assertThat(f.rank(dynamo, prompt)[0]).isEqualTo(0);
    f.prefill[0] = 11 * Fixture.BS; // r0 = 11 + 10 = 21 > 20
    assertThat(f.rank(dynamo, prompt)[0]).isEqualTo(1);
  }

  @Test
  void theVariantWithOverlapWeightTwo_staysOnTheCacheWhereTheDefaultGoesCold() {
    Fixture f = new Fixture(2);
    long[] prompt = Fixture.prompt(1, 10);
    f.cache(0, prompt, 8, Tier.GPU);
    Policy w1 = Fixture.policy("dynamo_kv", 1);
    Policy w2 = Fixture.policy("dynamo_kv_w2", 1);
    f.running(w1, "r", Fixture.prompt(5_000, 14), 0);
    f.running(w2, "r", Fixture.prompt(5_000, 14), 0);
    // weight 1: r0 = 2 + (14 + 10) = 26 > r1 = 10 + 10; weight 2: r0 = 4 + 24 = 28 < 20 + 10
    assertThat(f.rank(w1, prompt)[0]).isEqualTo(1);
    assertThat(f.rank(w2, prompt)[0]).isEqualTo(0);
  }

  @Test
  void sees_onlyItsOwnRequests_andEventConfirmedBlocks() {
    Visibility v = Fixture.policy("dynamo_kv", 1).visibility();
    assertThat(v.peerReservations()).isFalse();
    assertThat(v.predictedBlocks()).isFalse();
  }

  /**
   * With {@code router_replica_sync} a router counts its peer's requests as its own once their
   * {@code AddRequest} arrives, and forgets them once their {@code Free} does. Replica 0 holds the
   * whole 100-block prompt; router A has put three 40-block requests there at t = 1,000 ms. Router
   * B, 5 ms away, still sees replica 0 idle at 1,004 ms (0 prefill + 100 active blocks against 100
   * + 100 cold) and stays on the cache; from 1,005 ms it counts A's 120 blocks there too (220 >
   * 200) and goes cold, where a router without the sync stays. A's releases at 1,010 ms reach B at
   * 1,015 ms, and B is back on the cache.
   */
  @Test
  void withReplicaSync_aPeersRequestsCount_oneNetworkDelayAfterItPlacedThem_untilItFreesThem() {
    Fixture f = new Fixture(2);
    long[] prompt = Fixture.prompt(1, 100);
    f.cache(0, prompt, 100, Tier.GPU);
    Policy[] routers = PeerRouters.of("dynamo_kv_sync", 2, 5_000);
    Policy a = routers[0];
    Policy b = routers[1];
    Policy alone = Fixture.policy("dynamo_kv", 2);
    f.now = 1_000;
    for (int i = 0; i < 3; i++) {
      f.running(a, "busy-" + i, Fixture.prompt(1_000 * (i + 1), 40), 0);
    }

    f.now = 1_004;
    assertThat(f.rank(b, prompt)[0]).isEqualTo(0);
    f.now = 1_005;
    assertThat(f.rank(b, prompt)[0]).isEqualTo(1);
    assertThat(f.rank(alone, prompt)[0]).isEqualTo(0);

    for (int i = 0; i < 3; i++) {
      a.onReleased("busy-" + i, 1_010);
    }
    f.now = 1_014;
    assertThat(f.rank(b, prompt)[0]).isEqualTo(1);
    f.now = 1_015;
    assertThat(f.rank(b, prompt)[0]).isEqualTo(0);
  }

  @Test
  void withReplicaSync_seesThePeersReservations_butStillOnlyEventConfirmedBlocks() {
    Visibility v = Fixture.policy("dynamo_kv_sync", 1).visibility();
    assertThat(v.peerReservations()).isTrue();
    assertThat(v.predictedBlocks()).isFalse();
  }

  /**
   * Dynamo credits a block held in host memory 0.75 and on disk 0.25 of a device block: the same
   * 64-block run costs 16 prefill blocks more from the CPU tier and 48 more from disk.
   */
  @Test
  void tiers_areCreditedAsDynamoShipsThem() {
    long[] prompt = Fixture.prompt(500, 64);
    Fixture f =
        new Fixture(4).holding(prompt, new int[] {64, 64, 64}, Tier.GPU, Tier.CPU, Tier.DISK);
    DynamoKvPolicy dynamo = (DynamoKvPolicy) Fixture.policy("dynamo_kv", 1);
    f.index.match(prompt, prompt.length, f.match);
    RouteQuery q = f.query(prompt);
    double gpu = dynamo.logit(q, f.match, f, 0);
    assertThat(dynamo.logit(q, f.match, f, 1) - gpu).isEqualTo(16.0);
    assertThat(dynamo.logit(q, f.match, f, 2) - gpu).isEqualTo(48.0);
    assertThat(dynamo.logit(q, f.match, f, 3) - gpu).isEqualTo(64.0);
    assertThat(f.rank(dynamo, prompt)).containsExactly(0, 1, 2, 3);
  }
}
