package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.RouteQuery;
import io.kvrouter.tracker.policy.Visibility;
import java.util.Arrays;
import java.util.Comparator;
import java.util.random.RandomGenerator;

/**
 * {@code tgi_trie}: the content-aware load balancer of text-generation-inference's kvrouter
 * (huggingface/text-generation-inference, branch {@code kvrouter} at 338cdc2e, {@code
 * kvrouter/src/lib.rs}: {@code ContentAware::next} lines 39-61, {@code OverloadHandler::next} lines
 * 113-139; {@code kvrouter/src/trie.rs}: {@code Node::insert} lines 53-124).
 *
 * <p>Every request body is inserted into a trie that is never pruned ({@link RankTrie}); the
 * insertion yields the range {@code [start, stop)} of ranks the body takes among all bodies so far
 * in lexicographic order ({@code n} of them). A point {@code x} is drawn uniformly in {@code [start
 * / n, stop / n]} and the request goes to backend {@code floor(x × backends)}, backends in their
 * configured order (here the replicas' ids in order). Requests that share a long prefix sit next to
 * each other in that order and so tend to land on the same backend, but the mapping shifts as the
 * trie grows. The overload check that follows ({@code inqueue <= 1.5 × inflight}, both counters
 * raised together when a request is sent and the queue one lowered first) always passes, so there
 * is no load term.
 *
 * <p>The original keys on the bytes of the request body; here on the prompt's block keys, whose
 * order keeps prompts with a common prefix together just as the bytes do.
 */
final class TgiTriePolicy implements Policy {

  private final RandomGenerator random;
  private final RankTrie trie = new RankTrie();

  TgiTriePolicy(RandomGenerator random) {
    this.random = random;
  }

  @Override
  public String name() {
    return "tgi_trie";
  }

  /** The kvrouter sees nothing but the bodies it forwards. */
  @Override
  public Visibility visibility() {
    return Visibility.OWN_REQUESTS;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    RankTrie.Range range = trie.insert(query.keys(), query.keyCount());
    double n = trie.count();
    double start = range.start() / n;
    double stop = range.stop() / n;
    double x = start + random.nextDouble() * (stop - start);
    Integer[] order = new Integer[candidates.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = candidates[i];
    }
    Arrays.sort(order, Comparator.comparing(r -> String.valueOf(load.id(r))));
    int backend = Math.min(order.length - 1, (int) (x * order.length));
    int[] out = new int[order.length];
    for (int i = 0; i < order.length; i++) {
      out[i] = order[(backend + i) % order.length];
    }
    return out;
  }
}
