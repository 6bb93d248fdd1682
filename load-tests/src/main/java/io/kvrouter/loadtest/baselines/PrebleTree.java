package io.kvrouter.loadtest.baselines;

import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The global radix tree of Preble's scheduler (WukLab/preble at 8e7906a, {@code
 * preble/global_lru_cache.py}: {@code dec_ref_counter} line 221, {@code _split_node} 237, {@code
 * _insert_helper} 264, {@code update_allocated_size} 312): every prompt the scheduler routes is
 * inserted, nodes carry how many running requests pass through them per replica and the set of
 * replicas the scheduler allocated them to. Over block keys instead of token ids: a node's length
 * is in blocks.
 *
 * <p>Splitting a node keeps the node object as the lower part (so a request's leaf stays valid) and
 * puts a new node above it holding the common part, with the lower part's reference counts and
 * allocation copied, as Preble does.
 *
 * <p>Cost: insertion O(prompt blocks) plus O(replicas) per split; about 100 bytes per node plus 8
 * bytes per key. Nothing is removed (Preble keeps every node). Not thread-safe.
 */
final class PrebleTree {

  /** One node: a run of keys with no branching inside. */
  static final class Node {
    long[] key;
    Node parent;
    final Map<Long, Node> children = new HashMap<>();

    /** Blocks from the root to the end of this node. */
    int contextLength;

    /** Running requests through this node, per replica. */
    int[] refs = new int[0];

    /** Replicas the scheduler allocated this node to; empty once it left the load window. */
    BitSet allocation = new BitSet();

    /** This node's load-window statistics while it is an important node, else null. */
    PrebleWindow.Stats stats;

    int blocks() {
      return key.length;
    }

    /** Blocks before this node. */
    int contextSoFar() {
      return contextLength - key.length;
    }

    /** Preble's "large" node: longer than everything before it. */
    boolean large() {
      return blocks() > contextSoFar();
    }

    int refs(int replica) {
      return replica < refs.length ? refs[replica] : 0;
    }

    void addRef(int replica, int delta) {
      if (replica >= refs.length) {
        refs = Arrays.copyOf(refs, replica + 1);
      }
      refs[replica] += delta;
    }
  }

  private final Node root = new Node();

  PrebleTree() {
    root.key = new long[0];
  }

  Node root() {
    return root;
  }

  /**
   * Inserts the first {@code length} keys of {@code data} and returns the node the prompt ends at.
   * For every node split on the way, {@code onSplit} receives (lower part, new upper part).
   */
  Node insert(long[] data, int length, BiConsumer<Node, Node> onSplit) {
    Node node = root;
    int at = 0;
    while (at < length) {
      Node child = node.children.get(data[at]);
      if (child == null) {
        Node fresh = new Node();
        fresh.key = Arrays.copyOfRange(data, at, length);
        fresh.parent = node;
        fresh.contextLength = node.contextLength + fresh.key.length;
        node.children.put(data[at], fresh);
        return fresh;
      }
      int common = 0;
      while (common < child.key.length && at + common < length) {
        if (child.key[common] != data[at + common]) {
          break;
        }
        common++;
      }
      if (common < child.key.length) {
        Node upper = split(child, common);
        onSplit.accept(child, upper);
        child = upper;
      }
      node = child;
      at += common;
    }
    return node;
  }

  private static Node split(Node child, int common) {
    Node upper = new Node();
    upper.key = Arrays.copyOf(child.key, common);
    upper.parent = child.parent;
    upper.contextLength = child.parent.contextLength + common;
    upper.refs = child.refs.clone();
    upper.allocation = (BitSet) child.allocation.clone();
    child.parent.children.put(upper.key[0], upper);
    child.key = Arrays.copyOfRange(child.key, common, child.key.length);
    child.parent = upper;
    upper.children.put(child.key[0], child);
    return upper;
  }

  /** The nearest ancestor of {@code node} (itself included) that is large. */
  static Node important(Node node) {
    Node n = node;
    while (n.parent != null && !n.large()) {
      n = n.parent;
    }
    return n;
  }

  /** Edges from {@code node} up to {@code ancestor}. */
  static int distance(Node node, Node ancestor) {
    int d = 0;
    for (Node n = node; n != ancestor && n != null; n = n.parent) {
      d++;
    }
    return d;
  }

  /** The allocation of the nearest ancestor (itself included) that has one, or null. */
  static BitSet inheritedAllocation(Node node) {
    for (Node n = node; n != null; n = n.parent) {
      if (!n.allocation.isEmpty()) {
        return n.allocation;
      }
    }
    return null;
  }

  /** A request runs on {@code replica} through {@code leaf}: allocate and count it up the path. */
  static void place(Node leaf, int replica) {
    for (Node n = leaf; n != null; n = n.parent) {
      n.allocation.set(replica);
      n.addRef(replica, 1);
    }
  }

  /** The request through {@code leaf} on {@code replica} finished. */
  static void finish(Node leaf, int replica) {
    for (Node n = leaf; n != null && n.parent != null; n = n.parent) {
      n.addRef(replica, -1);
    }
  }

  /** Moves {@code node} and every node below it to {@code replica} alone. */
  static void allocateSubtree(Node node, int replica) {
    node.allocation.clear();
    node.allocation.set(replica);
    for (Node c : node.children.values()) {
      allocateSubtree(c, replica);
    }
  }

  /** Forgets {@code replica} everywhere (it left the cluster). */
  void dropReplica(int replica) {
    drop(root, replica);
  }

  private static void drop(Node node, int replica) {
    node.allocation.clear(replica);
    if (replica < node.refs.length) {
      node.refs[replica] = 0;
    }
    for (Node c : node.children.values()) {
      drop(c, replica);
    }
  }
}
