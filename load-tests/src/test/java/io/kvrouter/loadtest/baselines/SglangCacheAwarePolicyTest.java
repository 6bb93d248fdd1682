package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Visibility;
import org.junit.jupiter.api.Test;

class SglangCacheAwarePolicyTest {

  /**
   * The engine index says replica 2 holds the prompt, but SMG never sees engine events: its own
   * tree is empty, so the miss goes to the least-loaded worker (fewest in flight, then fewest
   * routed, then list order: replica 0), where kvrouter follows the cache to replica 2.
   */
  @Test
  void aMissOnItsOwnTree_goesToTheLeastLoadedWorker_notWhereTheEngineCachedThePrompt() {
    Fixture f = new Fixture(3);
    long[] prompt = Fixture.prompt(500, 8);
    f.cache(2, prompt, 8, Tier.GPU);
    Policy p = Fixture.policy("sglang_cache_aware", 1);

    assertThat(f.rank(p, prompt)[0]).isEqualTo(0);
    assertThat(f.kvrouterPick(prompt)).isEqualTo(2);
  }

  @Test
  void aMiss_goesToTheLeastLoadedWorker_notTheSmallestTree() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    assertThat(f.route(p, Fixture.prompt(10, 20))).isEqualTo(0); // replica 0's tree: 20 blocks
    f.inFlight[1] = 1; // replica 1: empty tree, one in flight
    // the old sgl-router sent a miss to the smallest tree (1); SMG sends it to the least loaded
    assertThat(f.route(p, Fixture.prompt(9_000, 4))).isEqualTo(0);
  }

  @Test
  void leastLoadedTies_goToTheWorkerThisGatewayRoutedFewestRequestsTo() {
    Fixture f = new Fixture(3);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    int[] picks = new int[3];
    for (int i = 0; i < 3; i++) {
      picks[i] = f.route(p, Fixture.prompt(1_000_000L * (i + 1), 4)); // misses, nothing in flight
    }
    assertThat(picks).containsExactly(0, 1, 2);
  }

  @Test
  void v1_9_0_aMatchAboveThirtyPercent_followsTheTree_unlessLoadsDifferByMoreThan64AndHalf() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("sglang_cache_aware_v1_9_0", 1);
    long[] prompt = Fixture.prompt(10, 8);
    f.inFlight[0] = 1; // the first request goes to replica 1
    int home = f.route(p, prompt);
    assertThat(home).isEqualTo(1);
    f.inFlight[0] = 0;
    f.inFlight[1] = 64; // 64 - 0 is not above 64: the tree wins
    assertThat(f.rank(p, prompt)[0]).isEqualTo(1);
    f.inFlight[1] = 65; // above 64, and above 1.5 x 0
    assertThat(f.rank(p, prompt)[0]).isEqualTo(0);
    f.inFlight[0] = 44; // 65 - 44 = 21: balanced again
    assertThat(f.rank(p, prompt)[0]).isEqualTo(1);

    long[] mostlyNew = Fixture.prompt(10, 30); // 8 of 30 blocks matched: 0.27, a miss
    f.inFlight[0] = 0;
    f.inFlight[1] = 1;
    assertThat(f.rank(p, mostlyNew)[0]).isEqualTo(0);
  }

  /**
   * SMG's mesh: gateway A sends a prompt to replica 1 (replica 0 busier). Gateway B has never seen
   * it, so a follow-up that extends it by two blocks is a miss on B's tree and goes to the least
   * loaded worker, replica 0 (replica 1 now has one in flight). A's insert reaches B as a hash B
   * cannot resolve, B asks A for a repair and takes A's tree: a few 1 s gossip rounds later B sends
   * the follow-up to the holder, replica 1, where a gateway without the mesh still sends it to
   * replica 0.
   */
  @Test
  void onTheMesh_aPeersInsertReachesThisGatewaysTree_afterTheGossipRounds() {
    Fixture f = new Fixture(3);
    Policy[] routers = PeerRouters.of("sglang_mesh", 2, 5_000);
    Policy a = routers[0];
    Policy b = routers[1];
    Policy alone = Fixture.policy("sglang_cache_aware", 2);
    long[] prompt = Fixture.prompt(10, 8);
    long[] followUp = Fixture.prompt(10, 10); // 8 of 10 blocks on the tree: 0.8 > 0.3
    f.now = 1_000;
    f.inFlight[0] = 1;
    assertThat(f.route(a, prompt)).isEqualTo(1);
    f.inFlight[0] = 0;
    f.inFlight[1] = 1;

    assertThat(f.rank(b, followUp)[0]).isEqualTo(0);
    f.now = 11_000;
    assertThat(f.rank(b, followUp)[0]).isEqualTo(1);
    assertThat(f.rank(alone, followUp)[0]).isEqualTo(0);
  }

  /**
   * A gateway on a mesh of its own decides as one without the mesh, draw for draw: the mesh's
   * phases and repair choices do not take from the gateway's routing generator (with one router,
   * {@code sglang_mesh} is {@code sglang_cache_aware}). Replicas 0 and 1 both hold the prompt (the
   * second time replica 0 was too busy), so with equal loads each decision draws between them.
   */
  @Test
  void onAMeshOfOne_theGatewayDecidesAsWithoutTheMesh() {
    Fixture f = new Fixture(4);
    Policy mesh = PeerRouters.of("sglang_mesh", 1, 5_000)[0];
    Policy plain = Fixture.policy("sglang_cache_aware", 1);
    long[] prompt = Fixture.prompt(10, 8);
    for (Policy p : new Policy[] {mesh, plain}) {
      f.inFlight[0] = 0;
      assertThat(f.route(p, prompt)).isEqualTo(0);
      f.inFlight[0] = 300; // above 1.5 x the mean and the mean + 64: least loaded instead
      assertThat(f.route(p, prompt)).isEqualTo(1);
    }
    f.inFlight[0] = 0;
    java.util.List<Integer> plainPicks = new java.util.ArrayList<>();
    java.util.List<Integer> meshPicks = new java.util.ArrayList<>();
    for (int i = 0; i < 32; i++) {
      f.now = 1_000L + 100L * i;
      plainPicks.add(f.rank(plain, prompt)[0]);
      meshPicks.add(f.rank(mesh, prompt)[0]);
    }
    assertThat(plainPicks).contains(0, 1);
    assertThat(meshPicks).isEqualTo(plainPicks);
  }

  /**
   * Replica 0 was sent each prompt first and replica 1 since (the second prompt went back to
   * replica 0 once more); replica 0 has two more requests in flight. SMG v1.9.0 goes to the node's
   * first owner, replica 0, for both: the latest toucher would be replica 1 for the first prompt,
   * and stamping a node anew on every insert would make replica 1 the earliest for the second. SMG
   * since PR #2161 goes to the least loaded of the two holders, replica 1.
   */
  @Test
  void aHit_goesToTheFirstOwnerInV1_9_0_andToTheLeastLoadedHolderNow() {
    Fixture f = new Fixture(3);
    long[] once = Fixture.prompt(10, 8);
    long[] again = Fixture.prompt(5_000, 8);
    Policy v190 = Fixture.policy("sglang_cache_aware_v1_9_0", 1);
    Policy now = Fixture.policy("sglang_cache_aware", 1);
    for (Policy p : new Policy[] {v190, now}) {
      f.running(p, "a", once, 0);
      f.running(p, "b", once, 1);
      f.running(p, "c", again, 0);
      f.running(p, "d", again, 1);
      f.running(p, "e", again, 0);
    }
    f.inFlight[0] = 2;

    assertThat(f.rank(v190, once)[0]).isEqualTo(0);
    assertThat(f.rank(v190, again)[0]).isEqualTo(0);
    assertThat(f.rank(now, once)[0]).isEqualTo(1);
  }

  /**
   * Eight workers, replica 3 the prompt's only holder. SMG now has no fleet-wide imbalance rule: it
   * spills a hit to the least-loaded worker only when the holder's load exceeds both 1.5 × the mean
   * and the mean + 64. Holding 73 of 73 in flight (mean 9.1) it keeps the request; at 80 (mean 10)
   * it spills to replica 0. v1.9.0's max − min rule would have spilled at 65 already.
   */
  @Test
  void aHit_spillsToTheLeastLoaded_onlyWhenTheHolderIs64AboveTheMeanAndHalfAgainAsBusy() {
    Fixture f = new Fixture(8);
    long[] prompt = Fixture.prompt(10, 8);
    Policy p = Fixture.policy("sglang_cache_aware", 1);
    f.running(p, "home", prompt, 3);
    f.inFlight[3] = 73;
    assertThat(f.rank(p, prompt)[0]).isEqualTo(3);
    f.inFlight[3] = 80;
    assertThat(f.rank(p, prompt)[0]).isEqualTo(0);
  }

  @Test
  void sees_onlyItsOwnInFlightRequests() {
    for (String name : new String[] {"sglang_cache_aware", "sglang_cache_aware_v1_9_0"}) {
      assertThat(Fixture.policy(name, 1).visibility()).isEqualTo(Visibility.OWN_REQUESTS);
    }
  }
}
