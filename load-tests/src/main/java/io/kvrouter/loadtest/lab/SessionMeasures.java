package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.tracker.KvTrackerCore;
import io.kvrouter.tracker.TrackerStats;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The measures SMG reports beside a lab run's own (smg pull request #2438: "follow-up requests
 * cached", "follow-ups landing on the worker that served turn 1", load CoV, gateway memory),
 * counted the lab's way.
 *
 * <ul>
 *   <li>{@code followUpCached}: of the prompt tokens of follow-up requests (turn 1 and later of a
 *       session), the share the engine found cached when it first admitted the request.
 *   <li>{@code followUpSameReplica}: follow-ups whose first placement is the replica of their
 *       session's first turn.
 *   <li>{@code loadCov}: coefficient of variation (population standard deviation over mean) of the
 *       requests placed on each replica.
 *   <li>{@code trackerBytes}, {@code trackerNodes}, {@code trackerHoldings}: the largest, over the
 *       run's samples and routers, of a router's index estimate ({@link TrackerStats}: bytes the
 *       budget counts, distinct blocks, (replica, block) holdings).
 * </ul>
 *
 * @param followUps follow-up requests that reached an engine
 * @param followUpCached cached share of their prompt tokens
 * @param followUpSameReplica share placed on their session's first replica
 * @param loadCov CoV of requests per replica
 * @param trackerBytes largest index estimate of one router, bytes
 * @param trackerNodes largest distinct-block count of one router
 * @param trackerHoldings largest holdings count of one router
 */
public record SessionMeasures(
    long followUps,
    double followUpCached,
    double followUpSameReplica,
    double loadCov,
    long trackerBytes,
    long trackerNodes,
    long trackerHoldings) {

  /** What a run records for these measures, request by request. Single-threaded. */
  static final class Recorder {
    private final Workload workload;
    private final int[] cachedTokens;
    private final int[] promptTokens;
    private final int[] firstReplica;
    private long trackerBytes;
    private long trackerNodes;
    private long trackerHoldings;

    Recorder(Workload workload) {
      this.workload = workload;
      int n = workload.size();
      this.cachedTokens = new int[n];
      this.promptTokens = new int[n];
      this.firstReplica = new int[n];
      Arrays.fill(cachedTokens, -1);
      Arrays.fill(firstReplica, -1);
    }

    /** Request {@code index} was first placed on {@code replica}. */
    void placed(int index, int replica) {
      if (firstReplica[index] < 0) {
        firstReplica[index] = replica;
      }
    }

    /** The engine admitted request {@code index} with {@code cached} of {@code prompt} cached. */
    void admitted(int index, int cached, int prompt) {
      if (cachedTokens[index] < 0) {
        cachedTokens[index] = cached;
        promptTokens[index] = prompt;
      }
    }

    /** Samples the routers' index sizes. O(routers). */
    void sample(KvTrackerCore[] routers) {
      for (KvTrackerCore router : routers) {
        TrackerStats s = router.stats();
        trackerBytes = Math.max(trackerBytes, s.indexBytes());
        trackerNodes = Math.max(trackerNodes, s.indexBlocks());
        trackerHoldings = Math.max(trackerHoldings, s.indexHoldings());
      }
    }

    /** The measures, or null when the workload has no follow-up request. O(requests). */
    SessionMeasures result(long[] perReplicaDecisions) {
      long followUps = 0;
      long cached = 0;
      long prompt = 0;
      long same = 0;
      Map<String, Integer> sessionReplica = new HashMap<>();
      for (int i = 0; i < workload.size(); i++) {
        WorkloadRequest r = workload.get(i);
        if (r.turn() == 0) {
          sessionReplica.put(r.session(), firstReplica[i]);
        }
      }
      for (int i = 0; i < workload.size(); i++) {
        WorkloadRequest r = workload.get(i);
        if (r.turn() == 0 || cachedTokens[i] < 0) {
          continue;
        }
        followUps++;
        cached += cachedTokens[i];
        prompt += promptTokens[i];
        Integer first = sessionReplica.get(r.session());
        if (first != null && first == firstReplica[i]) {
          same++;
        }
      }
      if (followUps == 0) {
        return null;
      }
      return new SessionMeasures(
          followUps,
          prompt == 0 ? 0 : (double) cached / prompt,
          (double) same / followUps,
          cov(perReplicaDecisions),
          trackerBytes,
          trackerNodes,
          trackerHoldings);
    }
  }

  /** Population standard deviation over mean; 0 for an all-zero row. */
  static double cov(long[] values) {
    double mean = Arrays.stream(values).average().orElse(0);
    if (mean == 0) {
      return 0;
    }
    double var = 0;
    for (long v : values) {
      var += (v - mean) * (v - mean);
    }
    return Math.sqrt(var / values.length) / mean;
  }
}
