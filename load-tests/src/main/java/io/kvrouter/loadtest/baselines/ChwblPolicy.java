package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.Ranking;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import net.openhft.hashing.LongHashFunction;

/**
 * {@code chwbl}: KubeAI's {@code PrefixHash} load balancing, consistent hashing with bounded loads
 * (substratusai/kubeai v0.21.0, {@code internal/loadbalancer/balance_chwbl.go}: {@code
 * chwblGetAddr} lines 14-84, {@code chwblAddEndpoint} 86-97, {@code chwblLoadOK} 152-162; defaults
 * from {@code api/k8s/v1/model_types.go} lines 189-208: 256 ring points per endpoint, mean load
 * factor 125 %, prefix of 100 characters, taken by {@code ChatCompletionRequest.Prefix} in {@code
 * api/openai/v1/chat_completions.go} line 525; the algorithm is Mirrokni, Thorup and Zadimoghaddam,
 * SODA 2018).
 *
 * <ul>
 *   <li>Ring: each replica {@code name} owns the points {@code xxhash64(name + i)} for {@code i} in
 *       0..255, sorted.
 *   <li>Key: {@code xxhash64} of the request's prefix; the walk starts at the first point at or
 *       after it (wrapping).
 *   <li>Walking the ring, the first replica whose in-flight count (this load balancer's own, before
 *       adding the request) is at most {@code (total in flight + 1) / replicas × 1.25} takes the
 *       request; any replica does when nothing is in flight. If none qualifies, the first replica
 *       on the walk takes it. There is no rounding up.
 * </ul>
 *
 * <p>KubeAI's prefix is the first 100 characters ({@code prefixCharLength}'s default) of the first
 * message whose role is {@code user}, its text parts joined, system and earlier messages left out
 * (chat), or of the prompt (completions): {@code ChatCompletionRequest.Prefix} in {@code
 * api/openai/v1/chat_completions.go} at 2f32ef49. Here only tokens are known: at about 4 characters
 * per token that is 25 tokens, which we round up to whole blocks ({@code chwblPrefixBlocks}, 2
 * blocks of 16 tokens) and key on the router key of the last of them, which names exactly those
 * tokens. The keys are those of the first user message alone where the lab's workload sends
 * messages (the lab's request view gives them, {@code multi-turn-chat}), so chats that share a
 * system prompt but not their first question spread over the ring. A token trace (the Mooncake
 * traces) or a prompt sent as one text has no message boundaries: there the keys are the prompt's,
 * and a shared leading template longer than the prefix makes every request hash to the same point,
 * as it does in KubeAI for such prompts.
 */
final class ChwblPolicy implements Policy {

  private static final LongHashFunction XXHASH64 = LongHashFunction.xx();

  private final BaselineSettings config;
  private String[] ringIds = new String[0];
  private long[] ringPoints = new long[0];
  private int[] ringReplicas = new int[0];

  ChwblPolicy(BaselineSettings config) {
    this.config = config;
  }

  @Override
  public String name() {
    return "chwbl";
  }

  /** KubeAI counts the requests it proxies itself. */
  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS;
  }

  static long hash(String s) {
    return XXHASH64.hashBytes(s.getBytes(StandardCharsets.UTF_8));
  }

  private void ensureRing(int[] candidates, LoadView load) {
    String[] ids = new String[candidates.length];
    for (int i = 0; i < candidates.length; i++) {
      String id = load.id(candidates[i]);
      ids[i] = id == null ? "#" + candidates[i] : id;
    }
    if (Arrays.equals(ids, ringIds)) {
      return;
    }
    int v = config.chwblVirtualNodes();
    long[][] points = new long[candidates.length * v][];
    for (int i = 0; i < candidates.length; i++) {
      for (int j = 0; j < v; j++) {
        points[i * v + j] = new long[] {hash(ids[i] + j), candidates[i]};
      }
    }
    Arrays.sort(points, (a, b) -> Long.compareUnsigned(a[0], b[0]));
    ringPoints = new long[points.length];
    ringReplicas = new int[points.length];
    for (int i = 0; i < points.length; i++) {
      ringPoints[i] = points[i][0];
      ringReplicas[i] = (int) points[i][1];
    }
    ringIds = ids;
  }

  /** The hash of the request's prefix (see the class comment for the token mapping). */
  long keyHash(RouteQuery query) {
    if (query.keyCount() == 0) {
      return XXHASH64.hashInt(query.promptTokens());
    }
    int last = Math.min(config.chwblPrefixBlocks(), query.keyCount()) - 1;
    return XXHASH64.hashLong(query.keys()[last]);
  }

  private static int indexOf(int[] candidates, int replica) {
    for (int i = 0; i < candidates.length; i++) {
      if (candidates[i] == replica) {
        return i;
      }
    }
    return -1;
  }

  /** KubeAI's {@code chwblLoadOK}. */
  static boolean loadOk(long load, long total, int n, double factor) {
    return total == 0 || load <= (double) (total + 1) / n * factor;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    ensureRing(candidates, load);
    long h = keyHash(query);
    int start = 0;
    while (start < ringPoints.length && Long.compareUnsigned(ringPoints[start], h) < 0) {
      start++;
    }
    long total = 0;
    for (int r : candidates) {
      total += load.inFlight(r);
    }
    int[] walk = new int[candidates.length];
    boolean[] seen = new boolean[candidates.length];
    int found = 0;
    int chosen = -1;
    for (int k = 0; k < ringPoints.length && found < candidates.length; k++) {
      int r = ringReplicas[(start + k) % ringPoints.length];
      int at = indexOf(candidates, r);
      if (at < 0 || seen[at]) {
        continue;
      }
      seen[at] = true;
      walk[found++] = r;
      if (chosen < 0
          && loadOk(load.inFlight(r), total, candidates.length, config.chwblLoadFactor())) {
        chosen = r;
      }
    }
    return chosen < 0 ? walk : Ranking.withFirst(walk, chosen);
  }
}
