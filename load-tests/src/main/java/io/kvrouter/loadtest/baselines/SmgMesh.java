package io.kvrouter.loadtest.baselines;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * SMG's mesh ({@code --enable-mesh}) as it syncs the cache-aware trees of several gateways, read in
 * smg-project/smg at f8daa883 (tree sync wired by #2119, after #1578 found it never was): {@code
 * model_gateway/src/mesh/adapters/tree_sync.rs}, {@code mesh/wiring.rs}, {@code
 * policies/cache_aware.rs} ({@code select_worker_with_tokens}, {@code apply_known_remote_insert})
 * and {@code crates/mesh/src/gossip_controller.rs}.
 *
 * <ul>
 *   <li><b>What a gateway sends.</b> Each routed request adds one {@code TreeDelta} to the
 *       gateway's buffer: the hash of the whole prompt and the chosen worker, not the prompt. No
 *       load: the {@code worker:} namespace carries each worker's registration and health, and its
 *       {@code load} field is "unread by importers" ({@code worker_sync.rs}), so each gateway still
 *       balances on its own in-flight counts.
 *   <li><b>When.</b> The gossip loop collects the buffers once a round, every second, and each peer
 *       stream's sender, on its own one-second ticker, sends the collected batch; so a delta leaves
 *       at the sender's first round after it was made and arrives at the sender's next stream tick
 *       after that, plus the network delay: between 0 and 2 s later. Each gateway's round and tick
 *       have their own phase, drawn at start.
 *   <li><b>What a receiver does with it.</b> A delta whose prompt hash the receiver knows (it
 *       routed that very prompt itself, or learned it in a repair) makes the worker a holder of
 *       what the receiver stored under that hash: the prefix it had matched before its own insert,
 *       or the whole path learned in a repair. An unknown hash (almost every one, since a chat's
 *       every turn is a new prompt) asks one random peer for a repair, unless one is under way: the
 *       request leaves at the receiver's next round, the peer answers with its whole tree ({@code
 *       tree:page:}, leaving at the peer's next round), and the receiver inserts every path for
 *       every holder; then the next unknown delta starts another. Deltas that found a repair under
 *       way are dropped (the repair brings what the peer has).
 * </ul>
 *
 * Here a tree is {@link SglangCacheAwarePolicy}'s per-worker block sets; the prompt hash is its
 * last block key with its length. A repair sends the peer's tree as the inserts that built it, own
 * and learned (the same paths and holders); what the receiver already got from that peer before is
 * not sent twice. Not modelled: a repair's 5 s retry (nothing is lost here), paging, and the peer's
 * eviction (every 120 s down to 2^26 characters per tree, which the lab's runs do not reach).
 *
 * <p>Cost: O(prompt blocks) per insert applied, once per gateway; a gateway's log holds one entry
 * per insert it has. Events are processed in time order across the gateways whenever any of them
 * decides ({@link #advanceTo}). Not thread-safe.
 */
final class SmgMesh {

  /** The gossip round and stream tick, 1 s ({@code gossip_controller.rs}). */
  static final long ROUND_MILLIS = 1_000;

  /** What a gateway's tree holds after an insert: {@code keys[0..count)} for {@code replica}. */
  record Insert(int id, int replica, long[] keys, int count, long promptHash) {}

  /** What a gateway's tree is to the mesh: it takes a peer's insert. */
  interface Tree {
    void insertRemote(int replica, long[] keys, int count);
  }

  private record Deltas(List<Insert> inserts) {}

  private record RepairRequest(int requester) {}

  private record RepairPage(int responder, int snapshot) {}

  private record Event(long atMillis, long seq, int target, Object payload) {}

  /** One gateway on the mesh. */
  final class Gateway {
    private final int index;
    private final Tree tree;
    private final RandomGenerator random;
    private final long roundPhase;
    private final long tickOffset;
    private final List<Insert> log = new ArrayList<>();
    private final BitSet has = new BitSet();
    private final Map<Long, Integer> known = new HashMap<>();
    private List<Insert> pendingDeltas = new ArrayList<>();
    private final List<Object[]> pendingTargeted = new ArrayList<>();
    private int[] cursor = new int[0];
    private boolean repairing;

    private Gateway(int index, Tree tree, RandomGenerator random) {
      this.index = index;
      this.tree = tree;
      this.random = random;
      this.roundPhase = random.nextLong(ROUND_MILLIS);
      this.tickOffset = random.nextLong(ROUND_MILLIS);
    }

    /**
     * This gateway routed a prompt of {@code count} blocks to {@code replica} at {@code nowMillis},
     * having matched {@code matchedBefore} of them in its tree before inserting it.
     */
    void routed(
        long nowMillis, int replica, long[] keys, int count, int promptTokens, int matchedBefore) {
      advanceTo(nowMillis);
      Insert e =
          new Insert(
              nextId++,
              replica,
              Arrays.copyOf(keys, count),
              count,
              hash(keys, count, promptTokens));
      has.set(e.id());
      log.add(e);
      known.put(e.promptHash(), matchedBefore);
      pendingDeltas.add(e);
    }

    /** Processes the mesh's rounds and deliveries due by {@code nowMillis}. */
    void advanceTo(long nowMillis) {
      SmgMesh.this.advanceTo(nowMillis);
    }

    /** Whether a repair this gateway asked for is under way. */
    boolean repairing() {
      return repairing;
    }
  }

  private final long delayMillis;
  private final SplittableRandom draws = new SplittableRandom(0x534D474D455348L); // "SMGMESH"
  private final List<Gateway> gateways = new ArrayList<>();
  private final PriorityQueue<Event> queue =
      new PriorityQueue<>(
          (a, b) ->
              a.atMillis() != b.atMillis()
                  ? Long.compare(a.atMillis(), b.atMillis())
                  : Long.compare(a.seq(), b.seq()));
  private long seq;
  private int nextId;

  private static final Object ROUND = new Object();

  SmgMesh(long delayMillis) {
    this.delayMillis = delayMillis;
  }

  /**
   * A gateway joins with its tree; its rounds start within the first second. Its phases and its
   * choice of repair peer come from the mesh's own generator, not the gateway's routing one, so a
   * gateway decides as it would without the mesh until a peer's insert reaches it.
   */
  Gateway join(Tree tree) {
    Gateway g = new Gateway(gateways.size(), tree, draws.split());
    gateways.add(g);
    push(g.roundPhase, g.index, ROUND);
    return g;
  }

  /** The prompt's identity: its last block key and its length. */
  static long hash(long[] keys, int count, int promptTokens) {
    long last = count == 0 ? 0 : keys[count - 1];
    return last * 0x9E3779B97F4A7C15L + promptTokens;
  }

  private void push(long at, int target, Object payload) {
    queue.add(new Event(at, seq++, target, payload));
  }

  /** Processes every round and delivery due by {@code nowMillis}, in time order. */
  void advanceTo(long nowMillis) {
    while (!queue.isEmpty() && queue.peek().atMillis() <= nowMillis) {
      Event e = queue.poll();
      Gateway g = gateways.get(e.target());
      if (e.payload() == ROUND) {
        round(g, e.atMillis());
      } else if (e.payload() instanceof Deltas d) {
        receive(g, d);
      } else if (e.payload() instanceof RepairRequest r) {
        g.pendingTargeted.add(new Object[] {r.requester(), new RepairPage(g.index, g.log.size())});
      } else {
        applyPage(g, (RepairPage) e.payload());
      }
    }
  }

  /** A round of {@code g}: its buffers leave, to arrive at its next stream tick. */
  private void round(Gateway g, long at) {
    long arrives = at + g.tickOffset + delayMillis;
    if (!g.pendingDeltas.isEmpty() && gateways.size() > 1) {
      Deltas batch = new Deltas(g.pendingDeltas);
      for (Gateway peer : gateways) {
        if (peer != g) {
          push(arrives, peer.index, batch);
        }
      }
    }
    g.pendingDeltas = new ArrayList<>();
    for (Object[] targeted : g.pendingTargeted) {
      push(arrives, (Integer) targeted[0], targeted[1]);
    }
    g.pendingTargeted.clear();
    push(at + ROUND_MILLIS, g.index, ROUND);
  }

  private void receive(Gateway g, Deltas d) {
    for (Insert e : d.inserts()) {
      Integer stored = g.known.get(e.promptHash());
      if (stored != null) {
        int count = Math.min(stored, e.count());
        Insert mine = new Insert(nextId++, e.replica(), e.keys(), count, e.promptHash());
        g.has.set(mine.id());
        g.log.add(mine);
        g.tree.insertRemote(e.replica(), e.keys(), count);
      } else if (!g.repairing) {
        g.repairing = true;
        int peer = g.random.nextInt(gateways.size() - 1);
        if (peer >= g.index) {
          peer++;
        }
        g.pendingTargeted.add(new Object[] {peer, new RepairRequest(g.index)});
      }
    }
  }

  private void applyPage(Gateway g, RepairPage page) {
    Gateway from = gateways.get(page.responder());
    if (g.cursor.length <= from.index) {
      g.cursor = Arrays.copyOf(g.cursor, gateways.size());
    }
    for (int i = g.cursor[from.index]; i < page.snapshot(); i++) {
      Insert e = from.log.get(i);
      if (!g.has.get(e.id())) {
        g.has.set(e.id());
        g.log.add(e);
        g.known.put(e.promptHash(), e.count());
        g.tree.insertRemote(e.replica(), e.keys(), e.count());
      }
    }
    g.cursor[from.index] = Math.max(g.cursor[from.index], page.snapshot());
    g.repairing = false;
  }
}
