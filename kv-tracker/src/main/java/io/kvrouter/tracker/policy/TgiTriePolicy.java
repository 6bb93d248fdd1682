package io.kvrouter.tracker.policy;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code tgi_trie}: the router of text-generation-inference's "Kvrouter" PR (huggingface/
 * text-generation-inference, kvrouter branch), as {@code shared/specs/peer-policies.md} describes
 * it: an approximate trie of routed prompts, the replica picked by the prompt's lexicographic
 * position in that trie, so requests with a common prefix land on the same replica; no load term.
 * We followed that description, not the PR's code.
 *
 * <p>Here the trie is an ordered map of routed prompts (as block-key sequences, compared
 * lexicographically) to the replica each went to. A new prompt looks at its two lexicographic
 * neighbours; if either shares at least one leading block, the one sharing more decides. If none
 * does, the prompt's position in key space (its first key as an unsigned fraction of 2^64) picks
 * the replica owning that slice, so unrelated prompts still spread evenly. The map keeps the {@code
 * tgiMaxPrompts} most recent prompts.
 */
final class TgiTriePolicy implements Policy {

  private final PolicyConfig config;
  private final TreeMap<long[], Integer> trie = new TreeMap<>(TgiTriePolicy::compare);
  private final ArrayDeque<long[]> age = new ArrayDeque<>();

  TgiTriePolicy(PolicyConfig config) {
    this.config = config;
  }

  @Override
  public String name() {
    return "tgi_trie";
  }

  static int compare(long[] a, long[] b) {
    int n = Math.min(a.length, b.length);
    for (int i = 0; i < n; i++) {
      int c = Long.compareUnsigned(a[i], b[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.length, b.length);
  }

  private static int common(long[] a, long[] b) {
    int n = Math.min(a.length, b.length);
    int i = 0;
    while (i < n && a[i] == b[i]) {
      i++;
    }
    return i;
  }

  @Override
  public int[] rank(RouteQuery query, int[] candidates, MatchResult match, LoadView load) {
    long[] prompt = Arrays.copyOf(query.keys(), query.keyCount());
    int[] sorted = candidates.clone();
    Arrays.sort(sorted);
    int slice =
        prompt.length == 0
            ? 0
            : (int) Math.multiplyHigh(prompt[0] >>> 1, (long) sorted.length << 1);
    slice = Math.min(Math.max(slice, 0), sorted.length - 1);
    int chosen = sorted[slice];
    int best = 0;
    List<Map.Entry<long[], Integer>> neighbours =
        Arrays.asList(trie.floorEntry(prompt), trie.ceilingEntry(prompt));
    for (Map.Entry<long[], Integer> e : neighbours) {
      if (e != null && Arrays.binarySearch(sorted, e.getValue()) >= 0) {
        int c = common(prompt, e.getKey());
        if (c > best) {
          best = c;
          chosen = e.getValue();
        }
      }
    }
    int[] rotated = new int[sorted.length];
    int at = Arrays.binarySearch(sorted, chosen);
    for (int i = 0; i < sorted.length; i++) {
      rotated[i] = sorted[(at + i) % sorted.length];
    }
    return rotated;
  }

  @Override
  public void onRouted(RouteQuery query, MatchResult match, int replica) {
    long[] prompt = Arrays.copyOf(query.keys(), query.keyCount());
    if (trie.put(prompt, replica) == null) {
      age.addLast(prompt);
    }
    while (age.size() > config.tgiMaxPrompts()) {
      trie.remove(age.pollFirst());
    }
  }

  @Override
  public void onReplicaRemoved(int replica) {
    trie.values().removeIf(r -> r == replica);
    age.removeIf(p -> !trie.containsKey(p));
  }
}
