package io.kvrouter.tracker.index;

/**
 * Claims over whole runs of prompt blocks: "replica r holds every block of this run of {@link
 * #span()} consecutive prompt blocks on GPU, by engine events". {@link PrefixIndex#match} checks a
 * run's claims with one probe here instead of one probe per block in the node table, so a long
 * cached prefix costs one probe per {@code span} blocks.
 *
 * <p><b>Contract.</b> A run is the prompt's blocks {@code [k·span, (k+1)·span)} for some {@code k},
 * named by {@link #runKey} of its keys (a 64-bit hash of the keys in order; two different runs with
 * equal hashes are assumed not to occur, as router keys themselves are). {@link #holds} is true
 * only if a claim was made by {@link #claim} and, since then, the replica lost none of the run's
 * blocks on GPU: every such loss of a block of a claimed run must be reported through {@link #lost}
 * (one block) or {@link #replicaCleared} (all of a replica's). Claims are a lossy cache: any claim
 * may be dropped at any time (a full table, a resize), which costs the next match a walk of that
 * run, never a wrong answer. Gaining blocks never invalidates a claim, since a claim only states
 * what a replica holds.
 *
 * <p><b>Cost.</b> {@link #holds}: one probe of a bucket of {@value #CLAIM_WINDOW} slots (one or two
 * cache lines) in a table of about {@code 16 · nodes / span} bytes. {@link #claim}: one probe plus
 * one member entry per block of the run. {@link #lost}: nothing while there are no claims, else
 * probes of two buckets of {@value #MEMBER_WINDOW} member slots; the index calls it only for blocks
 * it flagged when they entered a claim, not for every block removed. {@link #replicaCleared}: a
 * scan of the claims. Memory: sized from the node table's capacity ({@link #sizeFor}), allocated on
 * the first claim: 8 bytes per member slot, {@code capacity / 2} rounded up to a power of two
 * member slots (4 to 8 bytes per indexed block), plus 20 bytes per claim slot, {@code 2 / span} of
 * the member slots (0.6 byte per indexed block at span 32). Not thread-safe: one owner, the index.
 */
final class RunSummary {

  /*
   * Implementation notes.
   *
   * A claim cannot be kept up to date from the engine's events the way the node table is: a
   * BlocksRemoved names single blocks, and the index keeps no links from a block to the runs it
   * belongs to (a block at a given depth belongs to as many runs as there are branches below it
   * within its run). So the links are made when a claim is made, from the prompt: every block of
   * the run gets a member entry pointing at the claim, and losing a block on GPU kills the
   * claims its member entries point to. This is the inverted-index form of invalidation; the
   * claims themselves are what Dynamo's radix tree and llm-d's kvblock index do not have (they
   * walk one block per step: ai-dynamo/dynamo lib/kv-router/README.md, llm-d-kv-cache-manager
   * pkg/kvcache/kvblock/index.go), and what a skip list's express lane gives an ordered walk.
   *
   * Both tables are open addressing with power-of-two capacity in buckets of eight slots (64
   * bytes of keys: one or two cache lines): a claim lives in its home bucket only, a member in its
   * home bucket or, when that is full, in a second bucket (two choices; a loss probes both), a
   * lookup reads the whole bucket, and deletion just zeroes a slot. When the buckets are full, a
   * slot of the home bucket is taken round robin and what it held is killed: for a claim slot, the
   * claim; for a member slot, the claim the member points to (a claim with a missing member could
   * outlive a loss, so it must go). With the home bucket only, a 128k-token prompt's claims lost
   * a tenth of themselves to full buckets before each match in the decision benchmark (each
   * match re-claims what it walked, which evicts other members: a steady churn at a member load
   * of about 3/8), and those runs were walked block by block again. Killing a claim bumps its slot's generation; a
   * member entry holds the claim slot (24 bits) and the generation's low 8 bits, so members of a
   * dead claim are recognised as stale and reused. A stale member whose generation wrapped around
   * can only kill a claim it does not belong to: a conservative error, never a wrong claim.
   *
   * The index flags the node entries of claimed blocks (PrefixIndex's CLAIMED bit), so a GPU loss
   * of a block in no claimed run does not probe here; the flag outlives a dropped claim, which only
   * costs a probe that finds nothing.
   *
   * Member entry: high 32 bits a fingerprint of (block key, replica), never 0; low 32 bits the
   * claim slot << 8 | generation & 0xFF. Fingerprint collisions kill claims needlessly, also only
   * conservatively.
   */

  /** Blocks per run in the kvrouter tracker. */
  static final int SPAN = 32;

  static final int CLAIM_WINDOW = 8;
  static final int MEMBER_WINDOW = 8;
  private static final long REPLICA_SALT = 0xC2B2AE3D27D4EB4FL;
  private static final int MAX_CLAIM_SLOTS = 1 << 24;
  private static final int MAX_MEMBER_SLOTS = 1 << 24;

  private final int span;
  private int memberSlots;
  private long[] claimKeys;
  private int[] claimReplicas;
  private int[] claimGens;
  private int[] claimStamps; // the index budget's clock when the claim last served a match
  private long[] members;
  private int live;
  private int cursor;
  private long sink;

  RunSummary(int span) {
    if (span < 2) {
      throw new IllegalArgumentException("span must be at least 2: " + span);
    }
    this.span = span;
    sizeFor(16);
  }

  /** Blocks per run. */
  int span() {
    return span;
  }

  /** Live claims. */
  int claims() {
    return live;
  }

  /**
   * Drops every claim and sizes the tables for a node table of {@code nodeCapacity} slots; they are
   * allocated on the next claim.
   */
  void sizeFor(int nodeCapacity) {
    int wanted = Integer.highestOneBit(Math.max(64, nodeCapacity / 2 - 1) << 1);
    memberSlots = Math.min(wanted, MAX_MEMBER_SLOTS);
    claimKeys = null;
    claimReplicas = null;
    claimGens = null;
    claimStamps = null;
    members = null;
    live = 0;
  }

  /** The name of the run {@code keys[from, to)}. */
  static long runKey(long[] keys, int from, int to) {
    long h = 0L;
    for (int i = from; i < to; i++) {
      h = h * Hashing.GOLDEN + keys[i];
    }
    return Hashing.mix64(h);
  }

  /** True when {@code replica} holds every block of the run named {@code run} on GPU. */
  boolean holds(long run, int replica) {
    return holds(run, replica, 0);
  }

  /**
   * As {@link #holds(long, int)}; a claim found is stamped with {@code now}, the index budget's
   * clock (0: no budget), since the match it serves does not stamp the run's blocks ({@link
   * #lastMatched}).
   */
  boolean holds(long run, int replica, int now) {
    if (live == 0) {
      return false;
    }
    long key = claimKey(run, replica);
    int mask = claimKeys.length - 1;
    int home = (int) key & mask & -CLAIM_WINDOW;
    for (int w = 0; w < CLAIM_WINDOW; w++) {
      if (claimKeys[home + w] == key) {
        claimStamps[home + w] = now;
        return true;
      }
    }
    return false;
  }

  /**
   * The latest stamp ({@link #holds(long, int, int)}, {@link #claim}) of the live claims of {@code
   * replica} with block {@code key} as a member, 0 if none: when a match last went over the block
   * through a claim without touching it. O(two member buckets).
   */
  int lastMatched(long key, int replica) {
    if (live == 0) {
      return 0;
    }
    long h = memberHash(key, replica);
    long fingerprint = (h >>> 32) | 1L;
    int memberMask = members.length - 1;
    int last = lastMatched(h & memberMask & -MEMBER_WINDOW, fingerprint);
    return Math.max(last, lastMatched(otherBucket(h, memberMask), fingerprint));
  }

  private int lastMatched(long home, long fingerprint) {
    int last = 0;
    for (int w = 0; w < MEMBER_WINDOW; w++) {
      long e = members[(int) home + w];
      if (e != 0L && (e >>> 32) == fingerprint && !stale(e)) {
        last = Math.max(last, claimStamps[claimOf(e)]);
      }
    }
    return last;
  }

  /**
   * Records that {@code replica} holds every block of {@code keys[from, to)}, the run named {@code
   * run}, on GPU (the caller has just seen it). Allocation-free once the tables exist.
   */
  void claim(long run, int replica, long[] keys, int from, int to) {
    claim(run, replica, keys, from, to, 0);
  }

  /** As {@link #claim(long, int, long[], int, int)}, stamped {@code now} ({@link #holds}). */
  void claim(long run, int replica, long[] keys, int from, int to, int now) {
    if (claimKeys == null) {
      allocate();
    }
    long key = claimKey(run, replica);
    int mask = claimKeys.length - 1;
    int home = (int) key & mask & -CLAIM_WINDOW;
    int slot = -1;
    for (int w = 0; w < CLAIM_WINDOW; w++) {
      int s = home + w;
      if (claimKeys[s] == key) {
        claimStamps[s] = now;
        return;
      }
      if (slot < 0 && claimKeys[s] == 0L) {
        slot = s;
      }
    }
    if (slot < 0) {
      slot = home + (cursor++ & (CLAIM_WINDOW - 1));
      kill(slot);
    }
    claimKeys[slot] = key;
    claimReplicas[slot] = replica;
    claimStamps[slot] = now;
    live++;
    long ref = ((long) slot << 8) | (claimGens[slot] & 0xFF);
    long[] m = members;
    int memberMask = m.length - 1;
    long touch = 0L;
    for (int i = from; i < to; i++) {
      touch += m[(int) memberHash(keys[i], replica) & memberMask & -MEMBER_WINDOW];
    }
    sink = touch;
    for (int i = from; i < to; i++) {
      long h = memberHash(keys[i], replica);
      long fingerprint = ((h >>> 32) | 1L) << 32;
      int memberHome = (int) h & memberMask & -MEMBER_WINDOW;
      int put = freeMember(m, memberHome);
      if (put < 0) {
        put = freeMember(m, otherBucket(h, memberMask));
      }
      if (put < 0) {
        put = memberHome + (cursor++ & (MEMBER_WINDOW - 1));
        kill(claimOf(m[put]));
        if (claimKeys[slot] != key) {
          return; // this very claim lost a member slot: it is gone, its entries are stale
        }
      }
      m[put] = fingerprint | ref;
    }
  }

  /** An empty or stale slot of the member bucket at {@code home}, or -1. */
  private int freeMember(long[] m, int home) {
    for (int w = 0; w < MEMBER_WINDOW; w++) {
      int s = home + w;
      if (m[s] == 0L || stale(m[s])) {
        return s;
      }
    }
    return -1;
  }

  /**
   * The second bucket a member of hash {@code h} may live in when its home bucket is full (from the
   * product's high bits, which depend on every bit of {@code h}, unlike its low bits).
   */
  private static int otherBucket(long h, int memberMask) {
    return (int) ((h * Hashing.GOLDEN) >>> 32) & memberMask & -MEMBER_WINDOW;
  }

  /** {@code replica} no longer holds the block {@code key} on GPU: its claims on it end. */
  void lost(long key, int replica) {
    if (live == 0) {
      return;
    }
    long h = memberHash(key, replica);
    long fingerprint = (h >>> 32) | 1L;
    long[] m = members;
    int memberMask = m.length - 1;
    forget(m, (int) h & memberMask & -MEMBER_WINDOW, fingerprint);
    forget(m, otherBucket(h, memberMask), fingerprint);
  }

  /** Kills the claims of the members with {@code fingerprint} in the bucket at {@code home}. */
  private void forget(long[] m, int home, long fingerprint) {
    for (int w = 0; w < MEMBER_WINDOW; w++) {
      int s = home + w;
      long e = m[s];
      if (e != 0L && (e >>> 32) == fingerprint) {
        if (!stale(e)) {
          kill(claimOf(e));
        }
        m[s] = 0L;
      }
    }
  }

  /** {@code replica} holds nothing any more: its claims end. O(claim slots). */
  void replicaCleared(int replica) {
    if (live == 0) {
      return;
    }
    for (int s = 0; s < claimKeys.length; s++) {
      if (claimKeys[s] != 0L && claimReplicas[s] == replica) {
        kill(s);
      }
    }
  }

  private void allocate() {
    int claimSlots = Math.max(16, Math.min(MAX_CLAIM_SLOTS, 2 * memberSlots / span));
    claimKeys = new long[Integer.highestOneBit(claimSlots - 1) << 1];
    claimReplicas = new int[claimKeys.length];
    claimGens = new int[claimKeys.length];
    claimStamps = new int[claimKeys.length];
    members = new long[memberSlots];
  }

  private void kill(int slot) {
    if (claimKeys[slot] != 0L) {
      claimKeys[slot] = 0L;
      claimGens[slot]++;
      live--;
    }
  }

  private static int claimOf(long member) {
    return (int) (member >>> 8) & 0xFFFFFF;
  }

  private boolean stale(long member) {
    int slot = claimOf(member);
    return claimKeys[slot] == 0L || (claimGens[slot] & 0xFF) != (int) (member & 0xFF);
  }

  private static long claimKey(long run, int replica) {
    long key = Hashing.mix64(run + replica * REPLICA_SALT);
    return key == 0L ? 1L : key;
  }

  private static long memberHash(long key, int replica) {
    return Hashing.mix64(key ^ (replica * REPLICA_SALT));
  }
}
