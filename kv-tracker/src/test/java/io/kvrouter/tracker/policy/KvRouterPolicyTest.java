package io.kvrouter.tracker.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.Tier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KvRouterPolicyTest {

  private static final long[] PROMPT = Fixture.prompt(1, 256); // 4,096 tokens

  /** A policy on {@code s}, bound as {@code router} unless null. */
  private static KvRouterPolicy onSettings(PolicySettings s, String router) {
    KvRouterPolicy p = new KvRouterPolicy(s, BusyThresholds.DEFAULTS);
    if (router != null) {
      p.bindRouter(router);
    }
    return p;
  }

  /** The defaults, spreading on ({@code true}) or off, bound as {@code router}. */
  private static KvRouterPolicy policy(boolean spread, String router) {
    PolicySettings d = PolicySettings.defaults();
    return onSettings(spread ? d : PolicySettings.parse("kvrouter@ties.spread=off"), router);
  }

  /** The defaults with {@code settings} ({@link PolicySettings#parse}), bound as {@code router}. */
  private static KvRouterPolicy tuned(String settings, String router) {
    return onSettings(PolicySettings.parse("kvrouter@" + settings), router);
  }

  /** Spreading off, with {@code settings} ({@link PolicySettings#parse}). */
  private static KvRouterPolicy offWith(String settings) {
    return tuned("ties.spread=off@" + settings, null);
  }

  @Test
  void kvrouter_isKvRouterPolicy() {
    assertThat(Fixture.policy("kvrouter", 1)).isInstanceOf(KvRouterPolicy.class);
  }

  @Test
  void atLightLoad_followsTheCache_longestCachedPrefixFirst() {
    Fixture f = new Fixture(4);
    f.cache(1, PROMPT, 100, Tier.GPU);
    f.cache(2, PROMPT, 200, Tier.GPU);
    f.cache(3, PROMPT, 50, Tier.GPU);
    int[] ranked = f.rank(policy(false, "a"), PROMPT);
    assertThat(ranked).containsExactly(2, 1, 3, 0);
  }

  /**
   * Replica 0 holds the whole prompt (1 token to compute, about 16.5 ms); replica 1 holds nothing
   * (4,096 tokens: 16.5 + 62.2 + 7.1 ≈ 85.8 ms by the mocker's pass time, plus the 69.3 ms of
   * compute those tokens take from the replica's later requests, work weight 1: ≈ 155 ms). Queued
   * prefill on replica 0 costs its pass time: 6,000 tokens ahead (≈ 123 ms) still win, 9,000 (two
   * passes, ≈ 198 ms) do not.
   */
  @Test
  void underLoad_spreadsExactlyWhereTheQueueAheadCostsMoreThanTheMissedCache() {
    Fixture f = new Fixture(2);
    f.cache(0, PROMPT, 256, Tier.GPU);
    KvRouterPolicy p = policy(false, "a");
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(0);
    f.prefill[0] = 6_000;
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(0);
    f.prefill[0] = 9_000;
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(1);
    // Decode load counts too: every pass of a decoding replica carries its decode step (≈ 33 ms
    // at 90 % KV usage), which tips 7,000 tokens ahead (≈ 143 ms) over the cold replica.
    f.prefill[0] = 7_000;
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(0);
    f.inFlight[0] = 200;
    f.decode[0] = 200_000;
    f.kv[0] = 0.9;
    assertThat(f.rank(p, PROMPT)[0]).isEqualTo(1);
  }

  /**
   * Replica 0 holds the whole prompt (≈ 16.5 ms predicted) but its first tokens come 420 ms after
   * the decision, as on a replica out of sequence slots, which the timing model does not see: after
   * a few of them the prompt goes to the cold replica 1 (≈ 155 ms) rather than wait there; with the
   * charge off it never leaves. Once replica 0 has been quiet for five half-lives, it is tried
   * again.
   */
  @Test
  void aReplicaSlowerThanPredicted_isChargedItsLag_untilItFades() {
    for (boolean on : new boolean[] {true, false}) {
      Fixture f = new Fixture(2);
      f.cache(0, PROMPT, 256, Tier.GPU);
      KvRouterPolicy p = offWith("timing.fit=false@lag.warmup=3@lag.half-life=" + (on ? 1000 : 0));
      int slow = 0;
      while (slow < 20 && f.rank(p, PROMPT)[0] == 0) {
        String id = "q" + slow++;
        assertThat(f.route(p, PROMPT, id)).isZero();
        f.now += 420;
        p.onPrefillCompleted(id, f.now);
        p.onReleased(id, f.now);
      }
      if (on) {
        assertThat(slow)
            .as("first tokens 420 ms late before it leaves, three of them warm-up")
            .isBetween(5, 7);
        f.now += 5_000;
        assertThat(f.rank(p, PROMPT)[0]).as("quiet for five half-lives").isZero();
      } else {
        assertThat(slow).as("without the charge").isEqualTo(20);
      }
    }
  }

  /**
   * A lone router's prompt that nothing holds starts a prefix its follow-ups come back to: with the
   * prefix count off ({@code familyHalfLifeMillis} 0), of equal candidates it goes to the one with
   * the fewest requests in flight, even the one written to lately, which the tie order of cached
   * requests (fewest tokens recently written) puts last; with {@code soloColdByLoad} off, that
   * order.
   */
  @Test
  void aLoneRoutersColdPrompt_goesToTheTieWithTheFewestInFlight_withoutThePrefixCount() {
    for (boolean on : new boolean[] {true, false}) {
      Fixture f = new Fixture(4);
      PolicySettings k =
          PolicySettings.parse("kvrouter@" + "cold.family-half-life=0@cold.solo-by-load=" + on);
      KvRouterPolicy p = onSettings(k, "a");
      f.running(p, "earlier", Fixture.prompt(99, 64), 1);
      java.util.Arrays.fill(f.inFlight, 4);
      f.inFlight[1] = 1;
      if (on) {
        assertThat(f.rank(p, PROMPT)[0]).isEqualTo(1);
      } else {
        assertThat(f.rank(p, PROMPT)[0]).as("by turn, replica 1 last").isNotEqualTo(1);
      }
    }
  }

  /**
   * Every prompt opens with the same 512 tokens (32 of its 400 blocks), which replicas 0-2 hold and
   * replica 3 does not. By default (a {@code coldMatchShare} of 0.1) that opening counts for
   * nothing in the cost: replica 3, written to least lately, comes first. With the share 0 it comes
   * last, 512 tokens slower for every such prompt, so at light load it would never get one.
   */
  @Test
  void anOpeningEveryPromptShares_belowTheColdMatchShare_doesNotKeepAReplicaOut() {
    long[] opening = Fixture.prompt(7, 32);
    for (double share : new double[] {0.1, 0}) {
      Fixture f = new Fixture(4);
      PolicySettings k = PolicySettings.parse("kvrouter@" + "cost.cold-match-share=" + share);
      KvRouterPolicy p = onSettings(k, "a");
      for (int r = 0; r < 3; r++) {
        f.cache(r, opening, 32, Tier.GPU);
        f.running(p, "earlier-" + r, opened(opening, 10_000L * (r + 1)), r);
      }
      f.now += 60_000;
      int[] rank = f.rank(p, opened(opening, 90_000));
      if (share > 0) {
        assertThat(rank[0]).as("the opening counts for nothing").isEqualTo(3);
      } else {
        assertThat(rank[3]).as("the opening counted").isEqualTo(3);
      }
    }
  }

  /** A prompt of 400 blocks: {@code opening}, then blocks whose keys start at {@code base}. */
  private static long[] opened(long[] opening, long base) {
    long[] keys = java.util.Arrays.copyOf(opening, 400);
    System.arraycopy(Fixture.prompt(base, 400 - opening.length), 0, keys, opening.length, 368);
    return keys;
  }

  /**
   * By default the least loaded near-tie for a lone router's new prefix is the one where it has
   * lately started the fewest prefixes (each the head of a family of later requests), whatever the
   * requests in flight say: replica 1 has 5 in flight, the others 2, but one prefix started against
   * 2 or 3. Requests that found their prefix cached start none; a new engine's empty cache holds
   * none. With the count off, the fewest in flight.
   */
  @Test
  void aLoneRoutersColdPrompt_goesToTheTieWhereItStartedTheFewestPrefixes() {
    for (boolean families : new boolean[] {true, false}) {
      Fixture f = new Fixture(4);
      PolicySettings k =
          PolicySettings.parse("kvrouter@" + "cold.family-half-life=" + (families ? 600_000 : 0));
      KvRouterPolicy p = onSettings(k, "a");
      int[] started = {3, 1, 2, 2};
      for (int r = 0; r < 4; r++) {
        for (int i = 0; i < started[r]; i++) {
          f.running(p, "cold-" + r + "-" + i, Fixture.prompt(1_000 + 10 * r + i, 64), r);
        }
      }
      long[] warm = Fixture.prompt(500, 64);
      f.cache(1, warm, 64, Tier.GPU);
      for (int i = 0; i < 5; i++) {
        f.running(p, "warm-" + i, warm, 1);
      }
      java.util.Arrays.fill(f.inFlight, 2);
      f.inFlight[1] = 5;
      f.now += 60_000;
      if (families) {
        assertThat(f.rank(p, PROMPT)[0]).as("fewest prefixes started").isEqualTo(1);
        p.onReplicaStartedAfresh(0);
        assertThat(f.rank(p, PROMPT)[0]).as("a new engine holds none").isEqualTo(0);
      } else {
        assertThat(f.rank(p, PROMPT)[0]).as("the most in flight").isNotEqualTo(1);
      }
    }
  }

  /**
   * In a burst of new prefixes (a lone router's second prompt that nothing holds in the same
   * millisecond) the prefix goes to the replica where the fewest were started, even one whose queue
   * puts it out of the near-ties: replica 3 started none but has 8,000 tokens queued. One alone, a
   * second later, stays among the near-ties, as do all with the setting off.
   */
  @Test
  void aLoneRoutersBurstOfNewPrefixes_goesWhereTheFewestStarted_outsideTheTiesToo() {
    for (boolean byFamilies : new boolean[] {true, false}) {
      Fixture f = new Fixture(4);
      PolicySettings k =
          PolicySettings.parse("kvrouter@" + "cold.solo-burst-by-families=" + byFamilies);
      KvRouterPolicy p = onSettings(k, "a");
      for (int r = 0; r < 3; r++) {
        f.running(p, "cold-" + r, Fixture.prompt(2_000 + 10 * r, 64), r);
      }
      f.prefill[3] = 8_000;
      f.inFlight[3] = 4;
      f.now += 60_000;
      assertThat(f.route(p, Fixture.prompt(3_000, 64)))
          .as("the first of the burst")
          .isNotEqualTo(3);
      assertThat(f.rank(p, Fixture.prompt(3_100, 64))[0])
          .as("the second, by families " + byFamilies)
          .matches(r -> byFamilies == (r == 3));
      f.now += 1_000;
      assertThat(f.rank(p, Fixture.prompt(3_200, 64))[0]).as("alone").isNotEqualTo(3);
    }
  }

  @Test
  void busyReplica_isRankedLast_evenWithTheWholePromptCached() {
    Fixture f = new Fixture(3);
    f.cache(0, PROMPT, 256, Tier.GPU);
    f.kv[0] = 0.99;
    assertThat(f.rank(policy(false, "a"), PROMPT)[2]).isEqualTo(0);
  }

  /**
   * The engines are three times slower than the prior: once their first tokens have been observed,
   * the policy's timing model has learnt it (the linear prefill coefficient within 15 %).
   */
  @Test
  void timing_isFittedOnline_fromObservedFirstTokens() {
    Fixture f = new Fixture(4);
    KvRouterPolicy p = policy(false, "a");
    EngineTiming truth = new EngineTiming(3 * 16.5, 3 * 15.18, 3 * 4.21, 1.0);
    SplittableRandom random = new SplittableRandom(5);
    for (int i = 0; i < 3_000; i++) {
      long[] prompt = Fixture.prompt(1_000_000L * i, 1 + random.nextInt(700));
      for (int r = 0; r < 4; r++) {
        f.prefill[r] = random.nextInt(20_000);
      }
      String id = "q" + i;
      int chosen = f.route(p, prompt, id);
      double ttft = truth.ttftMillis(f.prefill[chosen], prompt.length * Fixture.BS, 8192, false, 0);
      f.now += 1;
      p.onPrefillCompleted(id, f.now - 1 + Math.round(ttft));
      p.onReleased(id, f.now);
    }
    assertThat(p.timing().perKiloToken()).isCloseTo(truth.perKiloToken(), within(0.15, truth));
    assertThat(p.timing().ttftMillis(5_000, 2_000, 8192, false, 0))
        .isCloseTo(truth.ttftMillis(5_000, 2_000, 8192, false, 0), withinPercent(5));
  }

  private static org.assertj.core.data.Offset<Double> within(double fraction, EngineTiming t) {
    return org.assertj.core.data.Offset.offset(fraction * t.perKiloToken());
  }

  private static org.assertj.core.data.Percentage withinPercent(double p) {
    return org.assertj.core.data.Percentage.withPercentage(p);
  }

  /**
   * Four routers on the same view of four equal replicas, deciding at the same instant: with
   * spreading off they all pick the same replica (herding); with it, all four differ, whether the
   * prompt is new (each router from its own starting point) or cached on every replica alike (each
   * router's turn).
   */
  @Test
  void concurrentRouters_onTheSameView_pickDifferentReplicas() {
    for (boolean cached : new boolean[] {false, true}) {
      Fixture f = new Fixture(4);
      if (cached) {
        f.holding(PROMPT, new int[] {128, 128, 128, 128}, Tier.GPU, Tier.GPU, Tier.GPU, Tier.GPU);
      }
      Set<Integer> picks = new HashSet<>();
      for (String router : new String[] {"a", "b", "c", "d"}) {
        KvRouterPolicy p = policy(true, router);
        for (String peer : new String[] {"a", "b", "c", "d"}) {
          if (!peer.equals(router)) {
            p.onPeerReserved(peer, 0, 0, 0, f.now - 5, f.now - 5);
          }
        }
        picks.add(f.rank(p, PROMPT)[0]);
      }
      assertThat(picks).as("cached " + cached).hasSize(4);
    }
    Fixture f = new Fixture(4);
    Set<Integer> herd = new HashSet<>();
    for (String router : new String[] {"a", "b", "c", "d"}) {
      herd.add(f.rank(policy(false, router), PROMPT)[0]);
    }
    assertThat(herd).hasSize(1);
  }

  /** Near-ties never override a clear winner: a cached replica is not given up for a turn. */
  @Test
  void turns_neverGiveUpAClearlyBetterReplica() {
    Fixture f = new Fixture(4);
    f.cache(2, PROMPT, 256, Tier.GPU);
    for (String router : new String[] {"a", "b", "c", "d"}) {
      KvRouterPolicy p = policy(true, router);
      for (String peer : new String[] {"a", "b", "c", "d"}) {
        if (!peer.equals(router)) {
          p.onPeerReserved(peer, 0, 0, 0, f.now - 5, f.now - 5);
        }
      }
      assertThat(f.rank(p, PROMPT)[0]).as(router).isEqualTo(2);
    }
  }

  /**
   * The whole 4,096-token prompt on GPU (replica 0: one token to compute, ≈ 16.5 ms), in the CPU
   * tier only (replica 1: one token plus 4,096 × 4.16 µs = 17.0 ms of transfer, charged to its TTFT
   * and again as work: ≈ 50.6 ms), or nowhere (replica 2: ≈ 155 ms, see above). CPU sits between,
   * by its transfer time: free transfers tie it with GPU, and a transfer slower than computing (100
   * µs a token, 410 ms) puts it behind the cold replica, which no fixed credit would.
   */
  @Test
  void aCpuHeldPrefixCostsItsTransfer_betweenGpuAndCold() {
    Fixture f = new Fixture(3);
    f.cache(0, PROMPT, 256, Tier.GPU);
    f.cache(1, PROMPT, 256, Tier.CPU);
    assertThat(f.rank(policy(false, "a"), PROMPT)).containsExactly(0, 1, 2);
    KvRouterPolicy p = offWith("timing.fit=on");
    RouteQuery q = f.query(PROMPT);
    f.index.match(PROMPT, PROMPT.length, f.match);
    assertThat(p.uncachedTokens(q, f.match, 1)).as("a CPU-held block is not computed").isEqualTo(1);
    int[] ranked = f.rank(offWith("cost.cpu-load-per-token=0us"), PROMPT);
    assertThat(ranked[2]).as("free transfers tie CPU with GPU").isEqualTo(2);
    assertThat(f.rank(offWith("cost.cpu-load-per-token=100us"), PROMPT))
        .as("a transfer slower than computing")
        .containsExactly(0, 2, 1);
  }

  /**
   * 6,000 tokens ahead of the cached replica 0 (about 123 ms) beat the idle replica 1 (about 86 ms
   * plus its 69 ms work term), as above. Under the defaults (sessionShare 1), a request that opens
   * a session and finds its prefix cached on replica 0 is charged its work by the replicas' write
   * shares, so it goes to the unwritten replica 1, where its later turns will not queue behind
   * everyone else's; the same request continuing a session, or opening one with a prompt nothing
   * holds, is ranked as before.
   */
  @Test
  void sessionOpening_withASharedPrefix_isChargedByWriteShare_othersAsBefore() {
    Fixture f = new Fixture(2);
    f.cache(0, PROMPT, 256, Tier.GPU);
    KvRouterPolicy p = policy(false, "a");
    for (int i = 0; i < 4; i++) {
      f.running(p, "r" + i, Fixture.prompt(100 + i, 256), 0);
    }
    f.prefill[0] = 6_000;
    assertThat(rankOpening(p, f, PROMPT, false)[0]).as("continuing").isEqualTo(0);
    assertThat(rankOpening(p, f, PROMPT, true)[0]).as("opening").isEqualTo(1);
    // A prompt nothing holds: replica 0 (written, idle) beats replica 1 (unwritten, 1,500 tokens
    // queued) by its empty queue; the write share would reverse that, but an opening that follows
    // no cache has no later turns drawn to a cache, so it is ranked as any request.
    Fixture g = new Fixture(2);
    KvRouterPolicy q = policy(false, "a");
    for (int i = 0; i < 4; i++) {
      g.running(q, "r" + i, Fixture.prompt(100 + i, 256), 0);
    }
    g.prefill[1] = 1_500;
    long[] cold = Fixture.prompt(9_000_000L, 256);
    assertThat(rankOpening(q, g, cold, false)[0]).as("cold, continuing").isEqualTo(0);
    assertThat(rankOpening(q, g, cold, true)[0]).as("cold, opening").isEqualTo(0);
    KvRouterPolicy off = offWith("cost.session-share=0@cost.session-excess=0");
    for (int i = 0; i < 4; i++) {
      f.running(off, "o" + i, Fixture.prompt(200 + i, 256), 0);
    }
    assertThat(rankOpening(off, f, PROMPT, true)[0]).as("sessionShare 0").isEqualTo(0);
  }

  /**
   * A session's opening brings its later turns to the replica it lands on, so its work counts
   * {@code sessionWork} times. Replica 0 holds a quarter of the prompt, is idle and has been
   * written the most; replica 1 has been written less and has 500 prompt tokens queued. A
   * continuing turn takes replica 0's cache and empty queue; so does an opening whose work counts
   * once; counted 1.5 times (the default), the opening's 3,072 uncached tokens weigh more on the
   * busier-written replica 0 than 4,096 discounted by replica 1's write share, and it goes to
   * replica 1.
   */
  @Test
  void sessionOpening_countsItsWorkSessionWorkTimes() {
    for (String sessionWork : new String[] {"1", "1.5"}) {
      Fixture f = new Fixture(2);
      f.cache(0, PROMPT, 64, Tier.GPU);
      KvRouterPolicy p = offWith("cost.session-work=" + sessionWork + "@cost.session-excess=0");
      written(f, p, 4);
      f.prefill[1] = 500;
      assertThat(rankOpening(p, f, PROMPT, false)[0]).as("continuing").isZero();
      assertThat(rankOpening(p, f, PROMPT, true)[0])
          .as("opening, sessionWork %s", sessionWork)
          .isEqualTo(sessionWork.equals("1") ? 0 : 1);
    }
    assertThat(PolicySettings.defaults().cost().sessionWork()).isEqualTo(1.5);
  }

  /**
   * A replica written more than the mean has more later requests for an opening's compute to delay,
   * as one written less has fewer ({@code cost.session-share-max}). Replica 0 holds three quarters
   * of the prompt (1,024 tokens to compute) and was written eight 4,096-token prompts, replica 1
   * nothing of it and one such prompt: shares 1.78 and 0.22 of the mean, cubed (sessionShare 3) 5.6
   * and 0.011. Capped at 1, replica 0's cache saves more than its work costs and the opening takes
   * it; capped at 1,000, replica 0's work counts 5.6 times and the opening goes to replica 1. A
   * continuing turn keeps the cache either way.
   */
  @Test
  void sessionOpening_onAReplicaWrittenAboveTheMean_isChargedItsShare_upToTheMax() {
    for (String max : new String[] {"1", "1000"}) {
      Fixture f = new Fixture(2);
      f.cache(0, PROMPT, 192, Tier.GPU);
      KvRouterPolicy p =
          offWith("cost.session-share=3@cost.session-excess=0@cost.session-share-max=" + max);
      written(f, p, 8);
      assertThat(rankOpening(p, f, PROMPT, false)[0]).as("continuing, max %s", max).isZero();
      assertThat(rankOpening(p, f, PROMPT, true)[0])
          .as("opening, max %s", max)
          .isEqualTo(max.equals("1") ? 0 : 1);
    }
  }

  /**
   * Where a prompt's holders are fed faster than the rest and busy, a session's opening leaves them
   * ({@code cost.session-excess}, {@link RecentWork}). Replica 0 holds three quarters of the prompt
   * and was just written eight 4,096-token prompts, replica 1 one: charged 64 times the queueing
   * (replica 0 computed 14,336 tokens beyond the mean within the last half-life, at a utilisation
   * of 0.34) the opening goes to replica 1; without the charge (0, the default), or with the same
   * eight writes a second apart (within one half-life replica 0 was then written no more than
   * replica 1), or for a continuing turn, it keeps replica 0's cache.
   */
  @Test
  void sessionOpening_onAHolderFedFasterThanTheRest_goesWhereItsTurnsWillNotQueue() {
    long[] prompt = Fixture.prompt(1, 256);
    for (String excess : new String[] {"64", "0"}) {
      Fixture f = new Fixture(2);
      f.cache(0, prompt, 192, Tier.GPU);
      KvRouterPolicy p = offWith("cost.session-excess=" + excess);
      written(f, p, 8);
      assertThat(rankOpening(p, f, prompt, false)[0]).as("continuing, %s", excess).isZero();
      assertThat(rankOpening(p, f, prompt, true)[0])
          .as("opening, session-excess %s", excess)
          .isEqualTo(excess.equals("64") ? 1 : 0);
    }
    assertThat(PolicySettings.defaults().cost().sessionExcess()).isZero();
    Fixture slow = new Fixture(2);
    slow.cache(0, prompt, 192, Tier.GPU);
    KvRouterPolicy p = offWith("cost.session-excess=64");
    for (int i = 0; i < 8; i++) {
      slow.running(p, "r" + i, Fixture.prompt(100 + i, 256), 0);
      slow.now += 1_000;
    }
    slow.running(p, "s", Fixture.prompt(200, 256), 1);
    assertThat(rankOpening(p, slow, prompt, true)[0])
        .as("opening, the same writes 1 s apart")
        .isZero();
  }

  /** Routes {@code onZero} 4,096-token prompts to replica 0 and one to replica 1. */
  private static void written(Fixture f, KvRouterPolicy p, int onZero) {
    for (int i = 0; i < onZero; i++) {
      f.running(p, "r" + i, Fixture.prompt(100 + i, 256), 0);
    }
    f.running(p, "s", Fixture.prompt(200, 256), 1);
  }

  private static int[] rankOpening(KvRouterPolicy p, Fixture f, long[] keys, boolean opens) {
    RouteQuery q =
        new RouteQuery(
            keys, keys.length, keys.length * Fixture.BS, Fixture.BS, f.now, false, opens);
    f.index.match(keys, keys.length, f.match);
    return p.rank(q, f.candidates(), f.match, f);
  }

  /**
   * The herding burst in miniature: four routers that know each other (from their marks) but have
   * seen none of each other's decisions each place six unique prompts at the same instant on eight
   * idle replicas. Each sees only its own reservations; striping over the view they share gives
   * every replica exactly three (router t takes positions t, t+4, t, ...), where each router's turn
   * on its own view alone would not.
   */
  /**
   * A 32k-token prompt no replica holds takes about a second to prefill: among several routers it
   * waits two steps of the prior delay before it is decided, alone two steps of {@code
   * soloHoldMillis} (so the smaller requests of its instant go first); held on one replica it is
   * short, and decides at once, as it does gated or below the smallest class.
   */
  @Test
  void longUncachedPrompts_waitBeforeTheirDecision_delaysAmongRouters_millisecondsAlone() {
    long[] giant = Fixture.prompt(7_000_000L, 2048);
    Fixture f = new Fixture(4);
    KvRouterPolicy p = tuned("cold.lead-from=0", "a");
    PolicySettings k = PolicySettings.defaults();
    double compute = EngineTiming.MOCKER.computeMillis(2048 * Fixture.BS);
    assertThat(compute).isBetween(2 * k.hold().fromMillis(), 4 * k.hold().fromMillis());
    assertThat(hold(p, f, giant, false))
        .as("alone")
        .isEqualTo((long) Math.ceil(2 * k.hold().soloMillis()))
        .isPositive();
    assertThat(hold(p, f, giant, true)).as("alone, gated").isZero();
    assertThat(hold(p, f, PROMPT, false)).as("alone, 4,096 tokens").isZero();
    KvRouterPolicy noSolo = tuned("hold.solo=0", "a");
    assertThat(hold(noSolo, f, giant, false)).as("alone, soloHoldMillis 0").isZero();
    p.onPeerHeard("b", f.now - 500);
    assertThat(hold(p, f, giant, false)).isEqualTo((long) Math.ceil(2 * 1.2 * 5.0));
    assertThat(hold(p, f, giant, true)).as("gated").isZero();
    assertThat(hold(p, f, PROMPT, false)).as("4,096 tokens").isZero();
    f.cache(2, giant, 2000, Tier.GPU);
    assertThat(hold(p, f, giant, false)).as("cached on replica 2").isZero();
  }

  /**
   * While decisions come in bursts (each of this router's met by a peer's within one delay), a
   * 12k-token prompt (about 250 ms, under {@code holdFromMillis} but over {@code
   * burstHoldFromMillis}) waits one step among routers ({@code burstHoldStep} late delays), so the
   * shorter requests of its burst are placed first; once the traffic is smooth again it decides at
   * once, as a lone router does.
   */
  @Test
  void midSizedPrompts_waitAmongRouters_onlyWhileDecisionsComeInBursts() {
    long[] mid = Fixture.prompt(8_000_000L, 768);
    PolicySettings k = PolicySettings.defaults();
    assertThat(EngineTiming.MOCKER.computeMillis(mid.length * Fixture.BS))
        .isBetween(
            k.hold().burstFromMillis(),
            Math.min(2 * k.hold().burstFromMillis(), k.hold().fromMillis()));
    Fixture f = new Fixture(8);
    KvRouterPolicy p = tuned("cold.lead-from=0", "a");
    KvRouterPolicy off = tuned("hold.burst.from=0@cold.lead-from=0", "a");
    p.onPeerHeard("b", f.now - 500);
    off.onPeerHeard("b", f.now - 500);
    assertThat(hold(p, f, mid, false)).as("no burst seen yet").isZero();
    decideSmallOnes(f, 100, true, p, off);
    assertThat(hold(p, f, mid, false))
        .as("in bursts")
        .isEqualTo((long) Math.ceil(k.hold().burstStep() * 5.0))
        .isNotEqualTo((long) Math.ceil(k.hold().step() * 5.0));
    assertThat(hold(p, f, PROMPT, false)).as("in bursts, 4,096 tokens").isZero();
    assertThat(hold(off, f, mid, false)).as("burstHoldFromMillis 0").isZero();
    decideSmallOnes(f, 200, false, p);
    assertThat(hold(p, f, mid, false)).as("smooth again").isZero();
  }

  /**
   * Sixteen routers that know each other, and two prompts no replica holds (1,600 tokens, about 25
   * ms of prefill) reaching each at the same instant. The second, in company, is decided at once by
   * the router first in turn; the others wait in steps of a late delay and a millisecond (the prior
   * 5 ms: 6 ms) up to one per turn, so 6, 12, 18, 24 ms, never longer than the prompt takes to
   * compute. The first, alone when it arrived, looks 1 ms for company, and having found it waits as
   * long as the second. Cached on a replica, too short to count, gated, or with the setting off,
   * none waits; a second after the other, it looks and finds none.
   */
  @Test
  void coldPrompts_inCompany_amongRouters_waitForTheRoutersBeforeThemInTurn() {
    long[] cold = Fixture.prompt(6_000_000L, 100);
    long[] sibling = Fixture.prompt(6_200_000L, 100);
    long[] small = Fixture.prompt(6_100_000L, 8);
    PolicySettings k = PolicySettings.defaults();
    double compute = EngineTiming.MOCKER.computeMillis(cold.length * Fixture.BS);
    assertThat(compute).isBetween(k.cold().leadFromMillis(), 4.5 * 6);
    assertThat(EngineTiming.MOCKER.computeMillis(small.length * Fixture.BS))
        .isLessThan(k.cold().leadFromMillis());
    Fixture f = new Fixture(8);
    List<Long> holds = new ArrayList<>();
    List<Long> looks = new ArrayList<>();
    List<Long> others = new ArrayList<>();
    for (int r = 0; r < 16; r++) {
      KvRouterPolicy p = policy(true, "r" + r);
      KvRouterPolicy off = tuned("cold.lead-from=0", "r" + r);
      assertThat(hold(p, f, cold, false)).as("alone").isZero();
      for (int peer = 0; peer < 16; peer++) {
        if (peer != r) {
          p.onPeerHeard("r" + peer, f.now - 500);
          off.onPeerHeard("r" + peer, f.now - 500);
        }
      }
      others.add(hold(p, f, small, false));
      long look = hold(p, f, sibling, false);
      looks.add(look);
      long waited = waited(p, f, cold);
      holds.add(waited);
      assertThat(rest(p, f, sibling, look))
          .as("the first, after its look, waits as long as the second")
          .isEqualTo(waited);
      others.add(hold(p, f, cold, true));
      others.add(hold(off, f, sibling, false));
      others.add(hold(off, f, cold, false));
    }
    long c = (long) compute;
    assertThat(holds)
        .containsExactlyInAnyOrder(0L, 6L, 12L, 18L, 24L, c, c, c, c, c, c, c, c, c, c, c);
    assertThat(looks).as("first of its instant: a look but at turn 0").containsOnly(0L, 1L);
    assertThat(looks).filteredOn(l -> l == 0L).hasSize(1);
    assertThat(others).as("too short, gated, or off").containsOnly(0L);
    List<Long> later = new ArrayList<>();
    List<Long> cached = new ArrayList<>();
    Fixture g = new Fixture(8);
    g.cache(2, cold, 4, Tier.GPU);
    for (int r = 0; r < 16; r++) {
      KvRouterPolicy p = policy(true, "r" + r);
      for (int peer = 0; peer < 16; peer++) {
        p.onPeerHeard("r" + peer, f.now - 500);
      }
      hold(p, f, sibling, false);
      f.now += 1_000;
      later.add(waited(p, f, cold));
      f.now -= 1_000;
      hold(p, g, sibling, false);
      cached.add(hold(p, g, cold, false));
    }
    assertThat(later).as("a second after the other: a look, no company").containsOnly(0L, 1L);
    assertThat(cached).as("cached on replica 2").containsOnly(0L);
  }

  /**
   * A cold lead stops waiting as soon as a router before it has started its prefix: it follows that
   * at once. One still new at the end of its wait goes where the routers have started the fewest
   * prefixes, the peers' counted from their reservations of whole prompts.
   */
  @Test
  void coldLeads_followAPrefixOnceStarted_elseStartItWhereFewestWereStarted() {
    long[] first = Fixture.prompt(7_000_000L, 100);
    long[] cold = Fixture.prompt(7_100_000L, 100);
    for (int r = 0; r < 16; r++) {
      Fixture f = new Fixture(8);
      KvRouterPolicy p = policy(true, "r" + r);
      for (int peer = 0; peer < 16; peer++) {
        p.onPeerHeard("r" + peer, f.now - 500);
      }
      hold(p, f, first, false);
      long step = hold(p, f, cold, false);
      if (waited(p, f, cold) <= step) {
        continue; // first or second in turn: one step at most
      }
      Fixture started = new Fixture(8);
      started.now = f.now;
      started.cache(3, cold, 100, Tier.GPU);
      assertThat(more(p, started, cold, step)).as("started on 3: follows now").isZero();
      // The routers before it start prefixes on every replica but 5, which gets as many tokens
      // of a prompt whose first half it held.
      String peer = "r" + (r + 1) % 16;
      for (int replica = 0; replica < 8; replica++) {
        p.onPeerReserved(peer, replica, 1_600, replica == 5 ? 3_200 : 1_600, f.now, f.now + 5);
      }
      long held = rest(p, f, cold, step);
      f.now += held;
      assertThat(f.rank(p, cold)[0]).as("router r" + r + ", after " + held + " ms").isEqualTo(5);
      return;
    }
    throw new AssertionError("no router but the first in turn");
  }

  /**
   * A held cold lead whose prefix a router before it started meanwhile goes to that replica even
   * behind a queue that makes a cold replica cheaper, when the prefix is most of its prompt: the
   * other replicas' queues lack the followers of their own prefixes, still held on every router. By
   * cost when the setting is off, or when only a small part of the prompt is cached there.
   */
  @Test
  void coldLeads_followAStartedPrefix_whateverTheQueue_whenItIsMostOfThePrompt() {
    long[] cold = Fixture.prompt(7_200_000L, 100);
    assertThat(followed(cold, 90, PolicySettings.defaults()))
        .as("90 of 100 blocks cached on 3, behind 300 ms of queue")
        .isEqualTo(3);
    assertThat(followed(cold, 90, PolicySettings.parse("kvrouter@" + "cold.follow-share=0")))
        .as("off: by cost")
        .isNotEqualTo(3);
    assertThat(followed(cold, 10, PolicySettings.defaults()))
        .as("10 of 100 blocks: by cost")
        .isNotEqualTo(3);
  }

  /**
   * Where a router later in turn than the first places {@code keys}, a cold lead in company, once a
   * router before it has cached {@code blocks} of it on replica 3 behind 20,000 queued tokens.
   */
  private static int followed(long[] keys, int blocks, PolicySettings k) {
    for (int r = 0; r < 16; r++) {
      Fixture f = new Fixture(8);
      KvRouterPolicy p = onSettings(k, "r" + r);
      for (int peer = 0; peer < 16; peer++) {
        p.onPeerHeard("r" + peer, f.now - 500);
      }
      hold(p, f, Fixture.prompt(7_300_000L, 100), false);
      long step = hold(p, f, keys, false);
      if (step == 0) {
        continue; // first in turn
      }
      Fixture started = new Fixture(8);
      started.now = f.now;
      started.cache(3, keys, blocks, Tier.GPU);
      started.prefill[3] = 20_000;
      started.inFlight[3] = 10;
      assertThat(more(p, started, keys, step)).as("started on 3: decided now").isZero();
      started.now += step;
      return started.rank(p, keys)[0];
    }
    throw new AssertionError("no router but the first in turn");
  }

  /**
   * Under intents a cold lead of 50 ms of prefill or more is announced with the time it will be
   * decided, so it is held its whole wait at once (a step per turn: 6, 12, 18 ms...), with no look
   * and no second ask: its peers expect it then. The first of the instant waits only the intents'
   * one delay.
   */
  @Test
  void announcedColdLeads_holdTheirWholeWaitAtOnce() {
    long[] first = Fixture.prompt(8_000_000L, 256);
    long[] cold = Fixture.prompt(8_100_000L, 256);
    PolicySettings k = PolicySettings.defaults();
    assertThat(EngineTiming.MOCKER.computeMillis(cold.length * Fixture.BS))
        .isBetween(k.intents().fromMillis(), k.hold().maxMillis());
    Fixture f = new Fixture(8);
    List<Long> holds = new ArrayList<>();
    for (int r = 0; r < 16; r++) {
      KvRouterPolicy p = policy(true, "r" + r);
      for (int peer = 0; peer < 16; peer++) {
        if (peer != r) {
          p.onPeerHeard("r" + peer, f.now - 500);
        }
      }
      p.onPeerTiming("r" + (r + 1) % 16, EngineTiming.MOCKER, f.now - 500);
      assertThat(hold(p, f, first, false)).as("first: the intents' delay").isEqualTo(6);
      long held = hold(p, f, cold, false);
      holds.add(held);
      assertThat(more(p, f, cold, held)).as("no second ask").isZero();
    }
    assertThat(holds).contains(6L, 12L, 18L, 24L);
  }

  /** The whole wait of {@code keys} arriving at {@code f.now}: its hold, then {@link #rest}. */
  private static long waited(KvRouterPolicy p, Fixture f, long[] keys) {
    return rest(p, f, keys, hold(p, f, keys, false));
  }

  /**
   * The whole wait of {@code keys}, which arrived at {@code f.now} and was held {@code held} ms:
   * each longer hold asked as the last runs out, until the policy asks for none.
   */
  private static long rest(KvRouterPolicy p, Fixture f, long[] keys, long held) {
    for (long h = held; h > 0; held += h) {
      h = more(p, f, keys, held);
    }
    return held;
  }

  /**
   * {@link KvRouterPolicy#holdMoreMillis} of {@code keys} held {@code held} ms by {@code f.now +
   * held}.
   */
  private static long more(KvRouterPolicy p, Fixture f, long[] keys, long held) {
    long now = f.now;
    f.now = now + held;
    try {
      RouteQuery q =
          new RouteQuery(keys, keys.length, keys.length * Fixture.BS, Fixture.BS, f.now, false);
      f.index.match(keys, keys.length, f.match);
      return p.holdMoreMillis(q, f.candidates(), f.match, held);
    } finally {
      f.now = now;
    }
  }

  /**
   * Forty small decisions a second apart on each of {@code ps}, each met by a decision of peer b a
   * millisecond later ({@code burst}) or not (b only heard from); then 20 ms, so all have settled.
   */
  private static void decideSmallOnes(
      Fixture f, long firstPrompt, boolean burst, KvRouterPolicy... ps) {
    for (int i = 0; i < 40; i++) {
      f.now += 1_000;
      for (KvRouterPolicy p : ps) {
        f.route(p, Fixture.prompt(firstPrompt + i, 4));
        if (burst) {
          p.onPeerReserved("b", i % 8, 64, 64, f.now + 1, f.now + 6);
        } else {
          p.onPeerHeard("b", f.now);
        }
      }
    }
    f.now += 20;
  }

  private static long hold(KvRouterPolicy p, Fixture f, long[] keys, boolean gated) {
    RouteQuery q =
        new RouteQuery(keys, keys.length, keys.length * Fixture.BS, Fixture.BS, f.now, gated);
    f.index.match(keys, keys.length, f.match);
    return p.holdMillis(q, f.candidates(), f.match);
  }

  /**
   * Concurrency {@code own}: four routers place six unique prompts each on eight idle replicas,
   * taking turns, and each decision reaches a random half of the other routers before their next
   * one (the rest never in time), so every router decides on a different partial view of the
   * others. Each spreads its own decisions from its own starting point, on near-ties found without
   * the peers' recent reservations: every replica gets exactly three, in every draw of who heard
   * what. With spreading off, the same draws stack four or more on some replica.
   */
  @Test
  void ownLoad_routersOnPartialViewsOfEachOther_threePerReplica() {
    for (long seed = 1; seed <= 20; seed++) {
      assertThat(burstOnPartialViews(true, seed)).as("seed " + seed).containsOnly(3);
    }
    assertThat(java.util.Arrays.stream(burstOnPartialViews(false, 1)).max().orElseThrow())
        .as("spreading off, most on one replica")
        .isGreaterThan(3);
  }

  private static int[] burstOnPartialViews(boolean spread, long seed) {
    String[] routers = {"a", "b", "c", "d"};
    SplittableRandom heard = new SplittableRandom(seed);
    Fixture[] views = new Fixture[routers.length];
    KvRouterPolicy[] policies = new KvRouterPolicy[routers.length];
    for (int t = 0; t < routers.length; t++) {
      views[t] = new Fixture(8);
      policies[t] = policy(spread, routers[t]);
      for (String peer : routers) {
        policies[t].onPeerHeard(peer, views[t].now - 500);
      }
    }
    int[] total = new int[8];
    for (int i = 0; i < 6; i++) {
      for (int t = 0; t < routers.length; t++) {
        long[] prompt = Fixture.prompt(1_000_000L * (10 * t + i + 1), 12);
        int chosen = views[t].route(policies[t], prompt, routers[t] + i);
        long tokens = prompt.length * Fixture.BS;
        views[t].prefill[chosen] += tokens;
        total[chosen]++;
        for (int u = 0; u < routers.length; u++) {
          if (u != t && heard.nextBoolean()) {
            views[u].prefill[chosen] += tokens;
            policies[u].onPeerReserved(
                routers[t], chosen, (int) tokens, (int) tokens, views[t].now, views[u].now);
          }
        }
      }
    }
    return total;
  }

  /**
   * Intents: four routers each take two unique prompts in the same instant on eight idle replicas,
   * none seeing another's reservations in time, but each having heard every peer's intents. Every
   * router places the intents due before its own decisions first, in the order they all share, so
   * the eight land on eight replicas, as one router would place them (these prompts, 4,096 tokens,
   * are announced and wait a propagation delay; a short one is decided at once). Without intents
   * the same decisions (spreading off) all stack on the first two replicas.
   */
  @Test
  void intents_routersDecidingAtOnce_placeABurstAsOneRouterWould() {
    assertThat(burstWithIntents(true)).containsOnly(1);
    assertThat(burstWithIntents(false)).containsExactly(4, 4, 0, 0, 0, 0, 0, 0);
  }

  private static int[] burstWithIntents(boolean intents) {
    String[] routers = {"a", "b", "c", "d"};
    PolicySettings k =
        PolicySettings.parse("kvrouter@" + "ties.spread=off@intents.enabled=" + intents);
    Fixture[] views = new Fixture[routers.length];
    KvRouterPolicy[] policies = new KvRouterPolicy[routers.length];
    long[][][] prompts = new long[routers.length][2][];
    for (int t = 0; t < routers.length; t++) {
      views[t] = new Fixture(8);
      policies[t] = onSettings(k, routers[t]);
      for (String peer : routers) {
        policies[t].onPeerHeard(peer, views[t].now - 500);
      }
      for (int i = 0; i < 2; i++) {
        prompts[t][i] = Fixture.prompt(1_000_000L * (10 * t + i + 1), 256);
      }
    }
    for (int t = 0; t < routers.length; t++) {
      for (int u = 0; u < routers.length; u++) {
        if (u == t) {
          continue;
        }
        Fixture view = views[u];
        for (int i = 0; i < 2; i++) {
          RouteQuery q = view.query(prompts[t][i]);
          view.index.match(prompts[t][i], prompts[t][i].length, view.match);
          int[] candidates = view.candidates();
          double[] uncached = new double[candidates.length];
          for (int c = 0; c < candidates.length; c++) {
            uncached[c] = policies[u].uncachedTokens(q, view.match, candidates[c]);
          }
          policies[u].onPeerIntent(
              new SharesIntents.PeerIntent(routers[t], view.now, q.promptTokens()),
              candidates,
              uncached,
              view.now);
        }
      }
    }
    int[] total = new int[8];
    for (int t = 0; t < routers.length; t++) {
      if (intents) {
        assertThat(hold(policies[t], views[t], Fixture.prompt(7, 12), false))
            .as("192 tokens, below intentsFromMillis: decided at once")
            .isZero();
        assertThat(hold(policies[t], views[t], prompts[t][0], false))
            .as("4,096 tokens: held one prior delay and a millisecond")
            .isEqualTo(6);
      }
      for (int i = 0; i < 2; i++) {
        int chosen = views[t].route(policies[t], prompts[t][i], routers[t] + i);
        views[t].prefill[chosen] += prompts[t][i].length * Fixture.BS;
        total[chosen]++;
      }
    }
    return total;
  }

  /**
   * Under intents, a short request is not announced, so its peers cannot foresee it: it keeps the
   * concurrency mode's tie rule (own load, from this router's starting point), which spreads the
   * routers' blind decisions, rather than the least-queued rule of announced requests (which would
   * send every router's first cold request to the first replica).
   */
  @Test
  void intents_unannouncedRequests_keepTheConcurrencyTieRule() {
    String[] routers = {"a", "b", "c", "d"};
    for (String router : routers) {
      int[] chosen = new int[2];
      for (int on = 0; on < 2; on++) {
        Fixture f = new Fixture(8);
        KvRouterPolicy p =
            onSettings(PolicySettings.parse("kvrouter@" + "intents.enabled=" + (on == 1)), router);
        for (String peer : routers) {
          p.onPeerHeard(peer, f.now - 500);
          if (!peer.equals(router)) {
            p.onPeerTiming(peer, EngineTiming.MOCKER, f.now - 500);
          }
        }
        chosen[on] = f.route(p, Fixture.prompt(1_000L + router.hashCode(), 12));
      }
      assertThat(chosen[1]).as(router).isEqualTo(chosen[0]);
    }
  }

  /**
   * Intents on, but no peer announces any (an ingress that does not carry them): no wait for a
   * prompt long enough to be announced (3,584 tokens, about 60 ms) but short of the hold among
   * routers.
   */
  @Test
  void intents_withoutAnyAnnounced_neverHold() {
    Fixture f = new Fixture(4);
    KvRouterPolicy p = intentsPolicy("a");
    long[] prompt = Fixture.prompt(9_000_000L, 224);
    PolicySettings k = PolicySettings.defaults();
    assertThat(EngineTiming.MOCKER.computeMillis(prompt.length * Fixture.BS))
        .isBetween(k.intents().fromMillis(), k.hold().fromMillis());
    p.onPeerHeard("b", f.now - 500);
    assertThat(hold(p, f, prompt, false)).isZero();
    p.onPeerTiming("b", EngineTiming.MOCKER, f.now - 500);
    assertThat(hold(p, f, prompt, false)).as("once b announces").isPositive();
  }

  private static KvRouterPolicy intentsPolicy(String router) {
    return onSettings(
        PolicySettings.parse("kvrouter@" + "intents.enabled=true@cold.lead-from=0"), router);
  }

  /**
   * A peer's timing model alone turns intents on: it tells both that the peer announces intents and
   * that it is a live router, so a long request right after it is held, not decided unannounced
   * while the peer's first reservation mark is on its way.
   */
  @Test
  void intents_aPeersTimingAlone_turnsThemOn() {
    Fixture f = new Fixture(4);
    KvRouterPolicy p = intentsPolicy("a");
    assertThat(hold(p, f, PROMPT, false)).as("alone").isLessThanOrEqualTo(1);
    p.onPeerTiming("b", EngineTiming.MOCKER, f.now - 500);
    assertThat(hold(p, f, PROMPT, false)).isGreaterThan(1);
  }

  /**
   * Strict mode: the gate serialises decisions, so of the near-ties (long decodes: three running or
   * two make no difference to the predicted TTFT) every router takes the one with the fewest
   * requests in flight, whatever its turn.
   */
  @Test
  void gatedDecision_takesTheNearTieWithFewestInFlight_whateverTheTurn() {
    for (String router : new String[] {"a", "b", "c", "d"}) {
      Fixture f = new Fixture(8);
      java.util.Arrays.fill(f.inFlight, 3);
      f.inFlight[5] = 2;
      java.util.Arrays.fill(f.decode, 3 * 1_000);
      KvRouterPolicy p = policy(true, router);
      for (String peer : new String[] {"a", "b", "c", "d"}) {
        p.onPeerHeard(peer, f.now - 500);
      }
      RouteQuery gated = new RouteQuery(PROMPT, PROMPT.length, 4_096, Fixture.BS, f.now, true);
      f.index.match(PROMPT, PROMPT.length, f.match);
      assertThat(p.rank(gated, f.candidates(), f.match, f)[0]).as(router).isEqualTo(5);
    }
  }
}
