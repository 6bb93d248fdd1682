package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.Arrays;
import net.openhft.hashing.LongHashFunction;

/**
 * {@code chwbl}: consistent hashing with bounded loads, as KubeAI's prefix-hash load balancer uses
 * it (kubeai docs "load balancing"; the algorithm is Mirrokni, Thorup and Zadimoghaddam,
 * "Consistent Hashing with Bounded Loads", SODA 2018; summarised in {@code
 * shared/specs/peer-policies.md}).
 *
 * <p>The request hashes onto a ring of {@code chwblVirtualNodes} points per replica by its first
 * {@code chwblPrefixBlocks} prompt blocks (KubeAI hashes the first N characters; we hash the router
 * key of block N−1, which names exactly those tokens). Walking clockwise, the first replica whose
 * in-flight count stays within {@code ceil(loadFactor · (total in-flight + 1) / replicas)} takes
 * the request. Ring points are placed by hashing the replica's target id, so every router builds
 * the same ring. The rest of the ranking follows ring order. The ring is the policy's own state,
 * rebuilt when the candidate set changes.
 */
final class ChwblPolicy implements Policy {

  private static final LongHashFunction HASH = LongHashFunction.xx3(0x4368776bL);

  private final PolicyConfig config;
  private String[] ringIds = new String[0];
  private long[] ringPoints = new long[0];
  private int[] ringReplicas = new int[0];

  ChwblPolicy(PolicyConfig config) {
    this.config = config;
  }

  @Override
  public String name() {
    return "chwbl";
  }

  private void ensureRing(int[] candidates, LoadView load) {
    String[] ids = new String[candidates.length];
    for (int i = 0; i < candidates.length; i++) {
      ids[i] = load.id(candidates[i]) + "\u0000" + candidates[i];
    }
    String[] sorted = ids.clone();
    Arrays.sort(sorted);
    if (Arrays.equals(sorted, ringIds)) {
      return;
    }
    int v = config.chwblVirtualNodes();
    long[] points = new long[candidates.length * v];
    int[] owners = new int[points.length];
    Long[] order = new Long[points.length];
    for (int i = 0; i < candidates.length; i++) {
      String id = load.id(candidates[i]);
      for (int j = 0; j < v; j++) {
        points[i * v + j] = HASH.hashChars((id == null ? "#" + candidates[i] : id) + "#" + j);
        owners[i * v + j] = candidates[i];
      }
    }
    for (int i = 0; i < points.length; i++) {
      order[i] = ((long) i);
    }
    Arrays.sort(
        order, (a, b) -> Long.compareUnsigned(points[(int) (long) a], points[(int) (long) b]));
    ringPoints = new long[points.length];
    ringReplicas = new int[points.length];
    for (int i = 0; i < points.length; i++) {
      ringPoints[i] = points[(int) (long) order[i]];
      ringReplicas[i] = owners[(int) (long) order[i]];
    }
    ringIds = sorted;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    ensureRing(candidates, load);
    long point =
        query.keyCount() == 0
            ? HASH.hashInt(query.promptTokens())
            : HASH.hashLong(
                query.keys()[Math.min(config.chwblPrefixBlocks(), query.keyCount()) - 1]);
    int start = 0;
    while (start < ringPoints.length && Long.compareUnsigned(ringPoints[start], point) < 0) {
      start++;
    }
    long total = 0;
    for (int r : candidates) {
      total += load.inFlight(r);
    }
    long bound = (long) Math.ceil(config.chwblLoadFactor() * (total + 1) / candidates.length);
    int[] inRingOrder = new int[candidates.length];
    int found = 0;
    int chosen = -1;
    for (int k = 0; k < ringPoints.length && found < candidates.length; k++) {
      int r = ringReplicas[(start + k) % ringPoints.length];
      boolean seen = false;
      for (int j = 0; j < found; j++) {
        seen |= inRingOrder[j] == r;
      }
      if (!seen) {
        inRingOrder[found++] = r;
        if (chosen < 0 && load.inFlight(r) + 1 <= bound) {
          chosen = r;
        }
      }
    }
    return chosen < 0 ? inRingOrder : Ranking.withFirst(inRingOrder, chosen);
  }
}
