package io.kvrouter.loadtest.baselines;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Visibility;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PreblePolicyTest {

  private static long[] family(int f, int extra) {
    return Fixture.prompt(1_000_000L * f, 10 + extra);
  }

  /** Routes a family's base prompt and {@code continuations} turns after it; returns the ids. */
  private static List<String> conversation(Fixture f, Policy p, int family, int from, int to) {
    List<String> ids = new ArrayList<>();
    for (int k = from; k <= to; k++) {
      String id = "f" + family + "-" + k;
      f.route(p, family(family, k), id);
      ids.add(id);
    }
    return ids;
  }

  @Test
  void explores_byRunningRequests_decodeDrivenLoad() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("preble_e2", 1);
    assertThat(f.route(p, family(1, 0), "a")).isEqualTo(0); // all idle: the lowest index
    assertThat(f.route(p, family(2, 0), "b")).isEqualTo(1); // replica 0 runs one request
    p.onReleased("a", -1);
    assertThat(f.route(p, family(3, 0), "c")).isEqualTo(0); // now replica 1 runs one
  }

  /**
   * Preble's {@code runtime_selector}: a follow-up turn whose new part is shorter than the turns
   * before it goes to the replica those turns were allocated to. Both conversations' first turns
   * finished, so the loads are equal and exploring would take the lowest index, replica 0;
   * conversation 2's second turn goes back to replica 1. (Breaking the exploit rule, e.g. always
   * exploring, sends it to replica 0 and fails this test.)
   */
  @Test
  void aFollowUpTurn_isExploitedToTheReplicaOfItsEarlierTurns_whenLoadsAreEqual() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("preble_e2", 1);
    assertThat(f.route(p, family(1, 0), "a1")).isEqualTo(0);
    assertThat(f.route(p, family(2, 0), "b1")).isEqualTo(1);
    p.onReleased("a1", -1);
    p.onReleased("b1", -1);
    assertThat(f.route(p, family(2, 3), "b2")).as("exploited").isEqualTo(1);
    assertThat(f.route(p, family(1, 3), "a2")).as("exploited").isEqualTo(0);
  }

  /**
   * A continuation whose new part is shorter than what the tree held exploits the replicas its
   * prefix was allocated to, whatever their load: replica 0 runs the whole family while replica 1
   * is idle. kvrouter, seeing replica 0's decoding KV and queue, spreads.
   */
  @Test
  void exploitsTheReplicaItsPrefixWasAllocatedTo_whenTheNewPartIsShorter() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("preble_e2", 1);
    for (int k = 0; k <= 5; k++) {
      assertThat(f.route(p, family(1, k))).as("turn %d", k).isEqualTo(0);
    }
    long[] next = family(1, 6);
    f.cache(0, next, 16, Tier.GPU);
    f.prefill[0] = 20_000;
    assertThat(f.route(p, next)).isEqualTo(0);
    assertThat(f.kvrouterPick(next)).isEqualTo(1);
    // a prompt sharing only 10 of 30 blocks explores instead: replica 1 is idle
    long[] branch = family(1, 20);
    branch[10] = 42; // leaves the family after its base: new part 20 > 10 held
    assertThat(f.route(p, branch)).isEqualTo(1);
  }

  /**
   * After 50 requests per replica, replica 0 runs 40 requests of family 1 and 20 of family 3,
   * replica 1 two of family 2. The next short-chain request triggers stealing: family 3 (the
   * cheaper node) moves to replica 1 (405 - 135 still exceeds 13.5 + 135), family 1 stays (moving
   * it would reverse the imbalance). Family 3's next turn goes to replica 1, though the engine
   * index holds its prefix on replica 0, where kvrouter sends it.
   */
  @Test
  void stealsTheCheaperImportantNode_fromAReplicaAtLeastOneAndAHalfTimesAsLoaded() {
    Fixture f = new Fixture(2);
    Policy p = Fixture.policy("preble_e2", 1);
    List<String> f1 = conversation(f, p, 1, 0, 0);
    List<String> f2 = conversation(f, p, 2, 0, 0);
    List<String> f3 = conversation(f, p, 3, 0, 0);
    f1.addAll(conversation(f, p, 1, 1, 59));
    f3.addAll(conversation(f, p, 3, 1, 29));
    f2.addAll(conversation(f, p, 2, 1, 9));
    assertThat(f1.size() + f2.size() + f3.size()).isEqualTo(100);
    f1.subList(0, 20).forEach(id -> p.onReleased(id, -1));
    f3.subList(0, 10).forEach(id -> p.onReleased(id, -1));
    f2.subList(0, 8).forEach(id -> p.onReleased(id, -1));
    long[] nextF3 = family(3, 30);
    f.cache(0, nextF3, 39, Tier.GPU);
    assertThat(f.rank(p, nextF3)[0]).as("before stealing").isEqualTo(0);

    assertThat(f.route(p, family(4, 0))).isEqualTo(1); // a new family, short chain: steals

    assertThat(f.route(p, nextF3)).isEqualTo(1);
    assertThat(f.route(p, family(1, 60))).isEqualTo(0);
    assertThat(f.kvrouterPick(nextF3)).isEqualTo(0);
  }

  @Test
  void runsAsOneGlobalScheduler_fedByItsOwnDecisions() {
    Visibility v = Fixture.policy("preble_e2", 1).visibility();
    assertThat(v.globalScheduler()).isTrue();
    assertThat(v.peerReservations()).isFalse();
    assertThat(v.predictedBlocks()).isFalse();
  }
}
