package io.kvrouter.tracker;

import io.kvrouter.protocol.keys.SpeculativeDecoding;
import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.index.PrefixIndex;
import io.kvrouter.tracker.policy.RouteQuery;
import java.util.Arrays;

/**
 * A request as a policy sees it: its candidate replicas (the model's, less those it excludes), its
 * query, and its prompt's prefix match in the index. Shared by the decision ({@link Placement}) and
 * what comes before it ({@link Coordination}), each with its own {@link MatchResult}. Not
 * thread-safe: one owner.
 */
final class Matcher {

  private final Membership replicas;
  private final PrefixIndex index;

  Matcher(Membership replicas, PrefixIndex index) {
    this.replicas = replicas;
    this.index = index;
  }

  /** The model's replicas without the request's excluded ones; null when none is left. */
  int[] candidates(RouteRequest request) {
    int[] candidates = replicas.candidates(request.model());
    if (candidates == null || request.excluded().isEmpty()) {
      return candidates;
    }
    candidates =
        Arrays.stream(candidates)
            .filter(c -> !request.excluded().contains(replicas.ids().idOf(c)))
            .toArray();
    return candidates.length == 0 ? null : candidates;
  }

  /** The request as the policy sees it at {@code nowMillis}. */
  RouteQuery query(RouteRequest request, long nowMillis, boolean gated) {
    long[] blockKeys = request.blockKeys();
    return new RouteQuery(
        blockKeys,
        blockKeys.length,
        request.promptTokens(),
        replicas.blockKeys(request.model()).blockSize(),
        nowMillis,
        gated,
        request.steering().opensSession());
  }

  /**
   * {@code query}, its prefix match now in {@code out}. An untrusted replica ({@link
   * Membership#untrusted()}) matches nothing: it stays a candidate, ranked by its load alone. A
   * replica whose engine drops the last matched block ({@link Membership#dropsLastBlock()}) is
   * credited with what that engine reuses ({@link SpeculativeDecoding#reusableBlocks}).
   */
  RouteQuery matched(RouteQuery query, MatchResult out) {
    index.match(query.keys(), query.keyCount(), out);
    index.applyWindows(query.keys(), query.blockSize(), out);
    for (int r : replicas.dropsLastBlock()) {
      SpeculativeDecoding rule = replicas.info(r).engine().speculativeDecoding();
      out.creditOnly(
          r, rule.reusableBlocks(out.matched(r), query.promptTokens(), query.blockSize()));
    }
    for (int r : replicas.untrusted()) {
      out.distrust(r);
    }
    return query;
  }
}
