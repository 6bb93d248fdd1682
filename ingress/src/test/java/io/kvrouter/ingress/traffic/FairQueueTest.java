package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class FairQueueTest {

  /** Serves {@code n} entries (or all), returning their values in service order. */
  static <T> List<T> serve(FairQueue<T> q, int n) {
    List<T> out = new ArrayList<>();
    while (out.size() < n && !q.isEmpty()) {
      FairQueue.Entry<T> e = q.peek();
      assertThat(q.remove(e, true)).isTrue();
      out.add(e.value());
    }
    return out;
  }

  @Test
  void morePressingPriority_isServedFirst_whateverItsAge() {
    FairQueue<String> q = new FairQueue<>(100);
    q.add("low-old", 10, "t", 10, 1);
    q.add("mid", 5, "t", 10, 1);
    q.add("high-new", 0, "t", 10, 1);
    assertThat(serve(q, 3)).containsExactly("high-new", "mid", "low-old");
  }

  @Test
  void noisyTenant_getsItsShare_notItsVolume() {
    FairQueue<String> q = new FairQueue<>(100);
    for (int i = 0; i < 100; i++) {
      q.add("noisy" + i, 0, "noisy", 100, 1);
    }
    for (int i = 0; i < 10; i++) {
      q.add("quiet" + i, 0, "quiet", 100, 1);
    }
    List<String> first20 = serve(q, 20);
    assertThat(first20.stream().filter(s -> s.startsWith("quiet"))).hasSize(10);
    assertThat(first20.stream().filter(s -> s.startsWith("noisy")))
        .as("in age order within the tenant")
        .containsExactly(
            "noisy0", "noisy1", "noisy2", "noisy3", "noisy4", "noisy5", "noisy6", "noisy7",
            "noisy8", "noisy9");
  }

  @Test
  void shares_followWeights_andCostsInTokens() {
    FairQueue<String> q = new FairQueue<>(1000);
    for (int i = 0; i < 50; i++) {
      q.add("big", 0, "big", 1000, 1); // one long request per round
      q.add("small", 0, "small", 100, 1); // ten short ones per round
      q.add("gold", 0, "gold", 1000, 2); // twice the share
    }
    List<String> served = serve(q, 39);
    Map<String, Long> byTenant = new HashMap<>();
    served.forEach(s -> byTenant.merge(s, 1L, Long::sum));
    assertThat(byTenant).containsEntry("big", 3L).containsEntry("gold", 6L);
    assertThat(byTenant.get("small")).isEqualTo(30L);
  }

  @Test
  void aQuantumFarBelowTheCosts_stillSharesTokensEvenly() {
    FairQueue<Long> q = new FairQueue<>(1);
    for (int i = 0; i < 40; i++) {
      q.add(1000L, 0, "big", 1000, 1);
      q.add(300L, 0, "small", 300, 1);
    }
    long big = 0;
    long small = 0;
    for (int served = 0; served < 30; served++) {
      FairQueue.Entry<Long> e = q.peek();
      q.remove(e, true);
      if (e.tenant().equals("big")) {
        big += e.value();
      } else {
        small += e.value();
      }
      assertThat(Math.abs(big - small)).as("after %d turns", served + 1).isLessThanOrEqualTo(1000);
    }
    assertThat(small).isGreaterThan(0);
    assertThat(big).isGreaterThan(0);
  }

  /**
   * The case of a quiet tenant with a few closed-loop clients against a backlogged one, each
   * request about two quanta: the backlogged tenant's deficit carries over from its last turn while
   * the quiet one starts each request with nothing, so by tokens alone the backlogged tenant would
   * go first (checked below). By slots held, the quiet tenant, running fewer, goes first.
   */
  @Test
  void aTenantRunningFewerRequests_goesBeforeOneRunningMore() {
    FairQueue<String> q = backloggedAgainstQuiet();
    for (int i = 0; i < 5; i++) {
      q.started("noisy");
    }
    q.started("quiet");
    assertThat(serve(q, 1)).containsExactly("quiet0");

    FairQueue<String> tokensOnly = backloggedAgainstQuiet();
    assertThat(serve(tokensOnly, 1)).as("by tokens alone").containsExactly("noisy3");
  }

  /** A backlogged tenant served alone for a while, then a quiet tenant's one request. */
  private static FairQueue<String> backloggedAgainstQuiet() {
    FairQueue<String> q = new FairQueue<>(64);
    for (int i = 0; i < 20; i++) {
      q.add("noisy" + i, 0, "noisy", 130, 1);
    }
    assertThat(serve(q, 3)).containsExactly("noisy0", "noisy1", "noisy2");
    q.add("quiet0", 0, "quiet", 130, 1);
    return q;
  }

  @Test
  void slotsHeld_countPerUnitOfWeight_andEqualCountsShareByTokens() {
    FairQueue<String> q = new FairQueue<>(100);
    for (int i = 0; i < 10; i++) {
      q.add("gold" + i, 0, "gold", 100, 2);
      q.add("plain" + i, 0, "plain", 100, 1);
    }
    q.started("gold");
    q.started("gold");
    q.started("gold");
    q.started("plain");
    assertThat(serve(q, 1)).as("1.5 per unit of weight against 1").containsExactly("plain0");
    q.started("plain");
    assertThat(serve(q, 1)).as("1.5 against 2").containsExactly("gold0");
    q.started("gold"); // gold 4 of weight 2, plain 2: even, so tokens decide
    assertThat(serve(q, 3)).containsExactlyInAnyOrder("gold1", "gold2", "plain1");

    for (int i = 0; i < 4; i++) {
      q.finished("gold");
    }
    assertThat(q.running("gold")).isZero();
    assertThat(serve(q, 1)).as("gold runs none now").containsExactly("gold3");
  }

  @Test
  void aQueueIsIdle_onlyWhenNothingWaitsAndNothingRuns() {
    FairQueue<String> q = new FairQueue<>(100);
    q.started("a");
    assertThat(q.isEmpty()).isTrue();
    assertThat(q.isIdle()).isFalse();
    q.finished("a");
    q.finished("a"); // more than started: stays at none
    assertThat(q.running("a")).isZero();
    assertThat(q.isIdle()).isTrue();
  }

  @Test
  void victim_isTheNewestOfTheLargestTenant_atTheLeastPressingPriority() {
    FairQueue<String> q = new FairQueue<>(100);
    q.add("a-high", 0, "a", 1, 1);
    q.add("a-low1", 9, "a", 1, 1);
    q.add("b-low1", 9, "b", 1, 1);
    q.add("b-low2", 9, "b", 1, 1);
    q.add("a-mid", 5, "a", 1, 1);
    assertThat(q.victim().value()).isEqualTo("b-low2");
    q.remove(q.victim(), false);
    assertThat(q.victim().value()).as("equal counts: the newest").isEqualTo("b-low1");
    q.remove(q.victim(), false);
    q.remove(q.victim(), false);
    assertThat(q.victim().value()).isEqualTo("a-mid");
    assertThat(q.count(0, "a")).isEqualTo(1);
  }

  @Test
  void entriesThatGiveUp_leaveNoDebtOrCredit() {
    FairQueue<String> q = new FairQueue<>(100);
    FairQueue.Entry<String> gone = q.add("gone", 0, "a", 100, 1);
    q.add("b1", 0, "b", 100, 1);
    assertThat(q.remove(gone, false)).isTrue();
    assertThat(q.remove(gone, false)).isFalse();
    assertThat(serve(q, 5)).containsExactly("b1");
    assertThat(q.isEmpty()).isTrue();
    assertThat(q.peek()).isNull();
    assertThat(q.victim()).isNull();
  }

  /**
   * Against the plain rules, over random interleavings of arrivals and turns: everything added is
   * served exactly once, nothing is served while a more pressing entry waits, and a tenant's
   * entries of one priority come out in the order they went in.
   */
  @Property(tries = 200)
  void servesEverythingOnce_inPriorityOrder_fifoPerTenant(
      @ForAll @Size(min = 1, max = 60) List<@IntRange(min = 0, max = 49) Integer> ops,
      @ForAll @IntRange(min = 1, max = 300) int quantum) {
    FairQueue<Integer> q = new FairQueue<>(quantum);
    Map<Integer, int[]> meta = new HashMap<>(); // id -> {priority, tenant, cost}
    List<Integer> served = new ArrayList<>();
    int id = 0;
    for (int op : ops) {
      if (op < 35) {
        int priority = op % 3;
        int tenant = op % 4;
        int cost = 1 + (op * 37) % 200;
        meta.put(id, new int[] {priority, tenant, cost});
        q.add(id++, priority, "t" + tenant, cost, 1);
      } else if (!q.isEmpty()) {
        FairQueue.Entry<Integer> e = q.peek();
        int best = Integer.MAX_VALUE;
        for (var it = q.iterator(); it.hasNext(); ) {
          best = Math.min(best, it.next().priority());
        }
        assertThat(e.priority()).isEqualTo(best);
        q.remove(e, true);
        served.add(e.value());
      }
    }
    served.addAll(serve(q, Integer.MAX_VALUE));
    assertThat(served).hasSize(id).doesNotHaveDuplicates();
    Map<String, Integer> lastOf = new HashMap<>();
    for (int s : served) {
      int[] m = meta.get(s);
      String key = m[0] + "/" + m[1];
      Integer last = lastOf.put(key, s);
      if (last != null && meta.get(last)[0] == m[0]) {
        assertThat(s).as("fifo within tenant %s", key).isGreaterThan(last);
      }
    }
  }
}
