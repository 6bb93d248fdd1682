package io.kvrouter.loadtest.baselines;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * A radix trie of key sequences that counts its entries (duplicates included) and tells, on each
 * insertion, the range of ranks the new entry takes among all entries in lexicographic order: the
 * trie of text-generation-inference's kvrouter (huggingface/text-generation-inference, branch
 * {@code kvrouter} at 338cdc2e, {@code kvrouter/src/trie.rs}: {@code Node::insert}, lines 53-124),
 * over 64-bit block keys instead of bytes.
 *
 * <p>Order: a sequence sorts before every longer sequence it is a prefix of; otherwise by the first
 * differing key, compared unsigned. An entry equal to earlier ones gets the range of all its equals
 * (including itself); a new distinct entry gets a range of width one. Nothing is ever removed, as
 * in the original.
 *
 * <p>Cost: an insertion walks one path, O(sequence length) key comparisons, plus, at each node on
 * the path, a sum over the children ordered before the next key (the original sums them the same
 * way). Memory: the keys of each distinct suffix once, about 8 bytes per key plus 100 bytes per
 * node. Not thread-safe.
 */
final class RankTrie {

  /** {@code [start, stop)}: the ranks an inserted entry's equals occupy, counted from 0. */
  record Range(long start, long stop) {}

  private static final class Node {
    long[] content;
    long entries; // in this subtree, duplicates included
    long local; // entries that end exactly here
    final TreeMap<Long, Node> children = new TreeMap<>(Long::compareUnsigned);
  }

  private final Node root = new Node();

  /** Entries inserted so far. */
  long count() {
    return root.entries;
  }

  /** Inserts the first {@code length} keys of {@code data}; returns the range its equals occupy. */
  Range insert(long[] data, int length) {
    return insert(root, data, 0, length);
  }

  private static Range insert(Node node, long[] data, int from, int to) {
    Range r;
    if (node.entries == 0) {
      node.content = Arrays.copyOfRange(data, from, to);
      node.local = 1;
      r = new Range(0, 1);
    } else {
      int common = mismatch(node.content, data, from, to);
      if (common == node.content.length) {
        if (from + common == to) {
          node.local++;
          r = new Range(0, node.local);
        } else {
          long next = data[from + common];
          long before = node.local + entriesBefore(node, next);
          Node child = node.children.computeIfAbsent(next, k -> new Node());
          Range inner = insert(child, data, from + common, to);
          r = new Range(before + inner.start(), before + inner.stop());
        }
      } else {
        r = split(node, data, from, to, common);
      }
    }
    node.entries++;
    return r;
  }

  /** The new entry parts from {@code node}'s content after {@code common} keys. */
  private static Range split(Node node, long[] data, int from, int to, int common) {
    Node rest = new Node();
    rest.content = Arrays.copyOfRange(node.content, common, node.content.length);
    rest.entries = node.entries;
    rest.local = node.local;
    rest.children.putAll(node.children);
    node.content = Arrays.copyOf(node.content, common);
    node.children.clear();
    node.children.put(rest.content[0], rest);
    node.local = 0;
    if (from + common == to) {
      node.local = 1; // the new entry ends here: it sorts before its extensions
      return new Range(0, 1);
    }
    Node fresh = new Node();
    fresh.content = Arrays.copyOfRange(data, from + common, to);
    fresh.entries = 1;
    fresh.local = 1;
    node.children.put(fresh.content[0], fresh);
    long start = entriesBefore(node, fresh.content[0]);
    return new Range(start, start + 1);
  }

  private static long entriesBefore(Node node, long key) {
    long sum = 0;
    for (Map.Entry<Long, Node> e : node.children.headMap(key, false).entrySet()) {
      sum += e.getValue().entries;
    }
    return sum;
  }

  private static int mismatch(long[] content, long[] data, int from, int to) {
    int n = Math.min(content.length, to - from);
    int i = 0;
    while (i < n && content[i] == data[from + i]) {
      i++;
    }
    return i;
  }
}
