package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.Arrays;

/**
 * What placing a request on each candidate costs under the kvrouter policy: the request's predicted
 * time to first token there, plus the compute its uncached tokens take from the replica's later
 * requests, plus the lateness the replica has lately shown. Per candidate {@code r}:
 *
 * <pre>
 *   own_r    = max(1, promptTokens − bs · (gpu + predictedCredit·predicted + cpu + diskCredit·disk))
 *   load_r   = bs · cpu blocks · cpuLoadMicrosPerToken / 1000        (reloading the CPU-held blocks)
 *   ahead_r  = prefill tokens reserved on r and not yet prefilled (every router's reservations)
 *            + peers' announced requests placed on r first (intents)
 *   ttft_r   = timing.ttftMillis(ahead_r, own_r, chunk − running_r, decoding_r, kvUsage_r) + load_r
 *   share_r  = min(shareMax, (written_r / mean written)^sessionShare) for a request opening a session
 *              with a cached prefix somewhere, else 1
 *   lag_r    = max(0, mean (observed − predicted) first-token time on r − lag.from)
 *   w        = workWeight, times sessionWork for a request opening a session with a cached prefix
 *   backlog_r = for such a request, sessionExcess · the queueing r's recent work rate beyond the
 *              mean makes its later requests meet ({@link RecentWork}), else 0
 *   cost_r   = ttft_r + w · share_r · (timing.computeMillis(own_r) + load_r) + backlog_r + lag_r
 * </pre>
 *
 * With nothing queued anywhere the smallest {@code own_r} wins, i.e. the longest cached prefix: the
 * policy is exactly cache-greedy at light load and spreads under load, by as much as the queue
 * ahead costs in time. A block held only in the CPU tier is neither free nor recomputed: the engine
 * loads it back, so the CPU copy of a prefix beats a cold replica and loses to the GPU copy by what
 * the transfer costs. A prompt no replica holds {@code coldMatchShare} of counts whole everywhere,
 * so a short prefix every prompt shares does not make the replicas lacking it look slower forever.
 *
 * <p>Also kept: each candidate's prediction and timing features of the last pricing, from which the
 * timing fit learns once the chosen replica's first token arrives ({@link #observation}).
 *
 * <p>Cost: O(n) per pricing over n candidates, a few arrays of n. Not thread-safe: owned by its
 * policy.
 */
final class CostModel {

  private final PolicySettings.Cost c;
  private final BusyThresholds busy;
  private final WritePressure writes;
  private final RecentWork recentWork;
  private final ReplicaLag lag;
  private final PeerRecent peerRecent;
  // Scratch of the last pricing, indexed like its candidates.
  private int[] lastCandidates = new int[0];
  private double[][] lastFeatures = new double[0][];
  private double[] lastPredicted = new double[0];
  private double[] recentByReplica = new double[16];

  CostModel(
      PolicySettings.Cost c,
      BusyThresholds busy,
      WritePressure writes,
      RecentWork recentWork,
      ReplicaLag lag,
      PeerRecent peerRecent) {
    this.c = c;
    this.busy = busy;
    this.writes = writes;
    this.recentWork = recentWork;
    this.lag = lag;
    this.peerRecent = peerRecent;
  }

  /**
   * One pricing: per candidate, the cost ({@code POSITIVE_INFINITY} for a busy one while some are
   * not), the tokens the decision counts as the request's own there, and the cost without the
   * peers' recent reservations ({@code blind}, for a new prefix's near-ties).
   *
   * @param cold whether no candidate holds any of the prompt
   */
  record Priced(double[] cost, double[] own, double[] blind, boolean cold) {}

  /** Whether {@code replica} is over a busy threshold. */
  boolean busy(LoadView load, int replica) {
    return busy.busy(load, replica);
  }

  /** Uncached prompt tokens of {@code replica}: at least one, as an engine always computes one. */
  double ownTokens(RouteQuery query, MatchResult match, int replica) {
    double cached =
        (match.gpu(replica)
                + c.predictedCredit() * match.predicted(replica)
                + match.cpu(replica)
                + c.diskCredit() * match.disk(replica))
            * query.blockSize();
    return Math.max(1, query.promptTokens() - cached);
  }

  /** The fewest uncached prompt tokens of {@code query} on any of {@code candidates}. */
  double leastOwn(RouteQuery query, int[] candidates, MatchResult match) {
    double least = Double.POSITIVE_INFINITY;
    for (int r : candidates) {
      least = Math.min(least, ownTokens(query, match, r));
    }
    return least;
  }

  /** Prefill tokens per pass left over by the running requests' decode tokens. */
  private double chunk(LoadView load, int replica) {
    return Math.max(c.chunkTokens() / 2.0, c.chunkTokens() - load.running(replica));
  }

  private static boolean decoding(LoadView load, int replica) {
    return load.decodeTokens(replica) > 0 || load.running(replica) > 0;
  }

  /** The first-token time of {@code own} tokens behind {@code ahead} on {@code replica}, ms. */
  double ttft(EngineTiming t, double ahead, double own, LoadView load, int replica) {
    return t.ttftMillis(
        ahead, own, chunk(load, replica), decoding(load, replica), load.kvUsage(replica));
  }

  /** Milliseconds to load {@code replica}'s CPU-held blocks of the match back to GPU. */
  private double cpuLoadMillis(MatchResult match, int replica, int blockSize) {
    return match.cpu(replica) * (double) blockSize * c.cpuLoadMicrosPerToken() / 1000.0;
  }

  /**
   * Prices {@code query} on {@code candidates} with timing {@code t}; {@code phantom[i]} is prefill
   * placed ahead on candidate {@code i} (peers' intents), {@code blindSince} the time after which
   * the peers' reservations are left out of the blind cost ({@code Long.MAX_VALUE}: none). Keeps
   * each candidate's prediction and features for {@link #observation}.
   */
  Priced price(
      EngineTiming t,
      RouteQuery query,
      int[] candidates,
      MatchResult match,
      LoadView load,
      double[] phantom,
      BlindWindow blindSince) {
    int n = candidates.length;
    long now = query.nowMillis();
    double[] cost = new double[n];
    double[] uncached = new double[n];
    double[] blind = new double[n];
    if (lastFeatures.length < n) {
      lastFeatures = new double[n][EngineTiming.SIZE];
      lastPredicted = new double[n];
    }
    for (int i = 0; i < n; i++) {
      uncached[i] = ownTokens(query, match, candidates[i]);
    }
    boolean cold = cold(query, uncached, n);
    // What the decision counts as this request's own tokens on each replica (see placed()); the
    // timing fit learns from what the replicas will really compute.
    double[] own = cold ? uncached : placed(query, uncached, n);
    boolean opening = query.opensSession() && !cold;
    double[] share =
        writes.shares(candidates, now, opening ? c.sessionShare() : 0, c.sessionShareMax());
    double workWeight = c.workWeight() * (opening ? c.sessionWork() : 1);
    double[] backlog = new double[n];
    if (opening && c.sessionExcess() > 0) {
      double[] queued = new double[n];
      for (int i = 0; i < n; i++) {
        queued[i] = load.prefillTokens(candidates[i]);
      }
      backlog = recentWork.charges(t, candidates, queued, now);
    }
    long recentSince = cold ? blindSince.since(query, now) : Long.MAX_VALUE;
    if (recentSince != Long.MAX_VALUE) {
      recentByReplica = peerRecent.prefillSince(recentSince, recentByReplica);
    }
    boolean anyFree = false;
    for (int i = 0; i < n; i++) {
      int r = candidates[i];
      double ahead = load.prefillTokens(r) + phantom[i];
      double reload = cpuLoadMillis(match, r, query.blockSize());
      double queued = ttft(t, ahead, own[i], load, r);
      cost[i] =
          queued
              + reload
              + workWeight * share[i] * (t.computeMillis(own[i]) + reload)
              + c.sessionExcess() * backlog[i]
              + lag.charge(r, now);
      lastPredicted[i] = (own == uncached ? queued : ttft(t, ahead, uncached[i], load, r)) + reload;
      blind[i] = cost[i];
      double recent =
          recentSince == Long.MAX_VALUE || r >= recentByReplica.length ? 0 : recentByReplica[r];
      if (recent > 0) {
        blind[i] += ttft(t, Math.max(0, ahead - recent), own[i], load, r) - queued;
      }
      EngineTiming.features(
          ahead - phantom[i] + uncached[i],
          chunk(load, r),
          decoding(load, r),
          load.kvUsage(r),
          lastFeatures[i]);
      anyFree |= !busy(load, r);
    }
    lastCandidates = candidates;
    if (anyFree) {
      for (int i = 0; i < n; i++) {
        if (busy(load, candidates[i])) {
          cost[i] = Double.POSITIVE_INFINITY;
          blind[i] = Double.POSITIVE_INFINITY;
        }
      }
    }
    return new Priced(cost, own, blind, cold);
  }

  /** When a new prefix's near-ties stop counting the peers' reservations ({@link Priced#blind}). */
  interface BlindWindow {
    /** The time after which peers' reservations are left out; {@code Long.MAX_VALUE}: none. */
    long since(RouteQuery query, long nowMillis);
  }

  /**
   * What the timing fit learns from once {@code replica}'s first token arrives, if the last pricing
   * priced it: its features, then the decision time, the replica and the predicted first-token
   * time; null otherwise.
   */
  double[] observation(int replica, long nowMillis) {
    for (int i = 0; i < lastCandidates.length; i++) {
      if (lastCandidates[i] == replica) {
        double[] entry = Arrays.copyOf(lastFeatures[i], EngineTiming.SIZE + 3);
        entry[EngineTiming.SIZE] = nowMillis;
        entry[EngineTiming.SIZE + 1] = replica;
        entry[EngineTiming.SIZE + 2] = lastPredicted[i];
        return entry;
      }
    }
    return null;
  }

  /**
   * {@code uncached}, or the whole prompt on every replica when no replica holds {@code
   * coldMatchShare} of it: a prefix that short (one block every prompt opens with, a system prompt)
   * would otherwise make each replica that has not yet computed it look slower for every request by
   * that prefix's compute, and never get one. Called only when the prompt is not cold.
   */
  private double[] placed(RouteQuery query, double[] uncached, int n) {
    double prompt = Math.max(1, query.promptTokens());
    double least = prompt;
    for (int i = 0; i < n; i++) {
      least = Math.min(least, uncached[i]);
    }
    if (prompt - least >= c.coldMatchShare() * prompt) {
      return uncached;
    }
    double[] whole = new double[n];
    Arrays.fill(whole, prompt);
    return whole;
  }

  /** Whether no candidate holds any of the prompt: {@code own} is each one's uncached tokens. */
  private static boolean cold(RouteQuery query, double[] own, int n) {
    for (int i = 0; i < n; i++) {
      if (own[i] < Math.max(1, query.promptTokens())) {
        return false;
      }
    }
    return true;
  }
}
