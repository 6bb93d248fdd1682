package io.kvrouter.tracker.policy;

import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;
import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Hand-built cluster state for policy tests (the tracker's and the lab's baselines'): an index, a
 * settable load view and a prompt.
 */
public final class Fixture implements LoadView {

  public static final int BS = 16;

  public final int n;
  public final int[] inFlight;
  public final long[] prefill;
  public final long[] decode;
  public final int[] waiting;
  public final double[] kv;
  public final PrefixIndex index = new PrefixIndex(64);
  public final MatchResult match = new MatchResult();
  public long now = 1_000;
  private int requests;

  public Fixture(int replicas) {
    n = replicas;
    inFlight = new int[n];
    prefill = new long[n];
    decode = new long[n];
    waiting = new int[n];
    kv = new double[n];
  }

  public int[] candidates() {
    int[] c = new int[n];
    for (int i = 0; i < n; i++) {
      c[i] = i;
    }
    return c;
  }

  /** A prompt of {@code blocks} full blocks whose keys start at {@code base}. */
  public static long[] prompt(long base, int blocks) {
    long[] k = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      k[i] = base + i;
    }
    return k;
  }

  public void cache(int replica, long[] keys, int blocks, Tier tier) {
    long[] k = Arrays.copyOf(keys, blocks);
    long[] h = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      h[i] = k[i] * 17 + replica;
    }
    index.store(replica, new BlocksStored(BlocksStored.ROOT, h, k, tier));
  }

  /**
   * Replica {@code i} holds the first {@code blocks[i]} blocks of {@code keys} in {@code tiers[i]};
   * returns this fixture.
   */
  public Fixture holding(long[] keys, int[] blocks, Tier... tiers) {
    for (int i = 0; i < tiers.length; i++) {
      cache(i, keys, blocks[i], tiers[i]);
    }
    return this;
  }

  public RouteQuery query(long[] keys) {
    return RouteQuery.of(keys, keys.length * BS, BS, now);
  }

  public int[] rank(Policy p, long[] keys) {
    RouteQuery q = query(keys);
    index.match(keys, keys.length, match);
    return p.rank(q, candidates(), match, this);
  }

  /** Ranks, routes to the first and tells the policy; returns the chosen replica. */
  public int route(Policy p, long[] keys) {
    return route(p, keys, "req-" + (++requests));
  }

  /** {@link #route(Policy, long[])} for a request named {@code requestId}. */
  public int route(Policy p, long[] keys, String requestId) {
    RouteQuery q = query(keys);
    index.match(keys, keys.length, match);
    int chosen = p.rank(q, candidates(), match, this)[0];
    p.onRouted(q, match, chosen);
    p.onReserved(requestId, q, chosen);
    return chosen;
  }

  /**
   * Tells the policy that {@code requestId}, which this router placed, is running on {@code
   * replica}.
   */
  public void running(Policy p, String requestId, long[] keys, int replica) {
    RouteQuery q = query(keys);
    index.match(keys, keys.length, match);
    p.onRouted(q, match, replica);
    p.onReserved(requestId, q, replica);
  }

  /** The replica kvrouter's own policy picks first on the same state (seeded). */
  public int kvrouterPick(long[] keys) {
    return rank(policy("kvrouter", 7), keys)[0];
  }

  public static Policy policy(String name, long seed) {
    return Policies.create(
        PolicySettings.parse(name), BusyThresholds.DEFAULTS, new SplittableRandom(seed));
  }

  @Override
  public String id(int replica) {
    return "replica-" + replica;
  }

  @Override
  public int inFlight(int replica) {
    return inFlight[replica];
  }

  @Override
  public long prefillTokens(int replica) {
    return prefill[replica];
  }

  @Override
  public long decodeTokens(int replica) {
    return decode[replica];
  }

  @Override
  public long activeTokens(int replica) {
    return prefill[replica] + decode[replica];
  }

  @Override
  public int waiting(int replica) {
    return waiting[replica];
  }

  @Override
  public int running(int replica) {
    return inFlight[replica];
  }

  @Override
  public double kvUsage(int replica) {
    return kv[replica];
  }
}
