package io.kvrouter.tracker.index;

import static io.kvrouter.tracker.index.NodeTable.INLINE;
import static io.kvrouter.tracker.index.PrefixIndex.GPU_BIT;
import static io.kvrouter.tracker.index.PrefixIndex.REAL_BITS;

/**
 * The prefix index's match walk: per replica, the leading blocks of a prompt it holds (by engine
 * events or predicted runs), stopping at the first block no replica still in the run holds. Reads
 * the {@link NodeTable}'s words directly, stamps matched nodes for the {@link IndexBudget}, serves
 * and records claims in the {@link RunSummary}. Allocation-free.
 *
 * <p>Cost: see {@link PrefixIndex}: one table probe per prompt block, except over runs of equal
 * holders (a word comparison per block) and claimed runs of {@code span} blocks (one summary probe
 * per replica still in the match). Not thread-safe: owned by one {@link PrefixIndex}.
 */
final class PrefixMatcher {

  /*
   * Implementation notes.
   *
   * match() is bound by memory latency (one cache miss per block on a table of tens of MB), so it
   * walks the prompt in chunks: it first touches the home slot of every key of the chunk, loads
   * that do not depend on each other and so overlap in the memory system, then probes for real.
   *
   * Runs of equal holders: consecutive prompt blocks usually have the very same holder word (a
   * replica's own history: one inline entry; a system prompt on every replica: equal overflow
   * lists). Once a block has extended its holders and no predicted run is in play, the following
   * blocks with an equal word only compare words; the run is applied to the holders in one step
   * when it ends (MatchResult.extendRun). This takes the per-holder work off the walk: with 64
   * replicas sharing a 64-block prefix it was 4,096 extend calls, now 64 plus 63 list comparisons.
   * A predicted run starting at a block, or any replica covered by one, ends the bulk walk, so the
   * per-block path decides wherever predictions could change the outcome.
   *
   * Runs of span blocks (the RunSummary): the match walks the prompt in runs aligned on multiples
   * of span. At the start of a run after the first, with at most MAX_CLAIMING replicas still in
   * the match, none of them covered by a predicted run and no predicted run of theirs starting in
   * the run, a claim of every one of them over the whole run (checked in the summary, one probe
   * each) applies the run at once; otherwise the run is walked block by block as above, and each
   * of those replicas that extended over all of it on GPU gets a claim. The summary learns every
   * GPU loss (remove, clearReplica) so that a claim never outlives one of its blocks. Many
   * replicas in the match (a system prompt shared by all) is the case runs of equal holders
   * already serve with one probe per block and no per-holder work.
   */

  /** Most replicas still in the run for which a match consults the run summary. */
  private static final int MAX_CLAIMING = 4;

  private final NodeTable nodes;
  private final PredictedRuns runs;
  private final RunSummary summary;
  private final IndexBudget budget; // null: no memory budget
  private final int[] gpuAtRunStart = new int[MAX_CLAIMING];
  private final int[] runSlots;
  private long prefetchSink;

  PrefixMatcher(NodeTable nodes, PredictedRuns runs, RunSummary summary, IndexBudget budget) {
    this.nodes = nodes;
    this.runs = runs;
    this.summary = summary;
    this.budget = budget;
    this.runSlots = new int[summary.span()];
  }

  /** Walks the first {@code count} keys of a prompt into {@code out}, already reset. */
  void match(long[] promptKeys, int count, MatchResult out) {
    long[] t = nodes.table;
    int cap = nodes.capacity;
    char[][] overflow = nodes.overflow;
    long sink = 0;
    boolean anyRuns = runs.size() > 0;
    int[] stamps = null; // the budget's access clock: when each found block was last matched
    int now = 0;
    if (budget != null) {
      if (budget.tick()) {
        summary.sizeFor(cap); // the claims' stamps no longer compare with the nodes'
      }
      stamps = budget.stamps();
      now = budget.now();
    }
    // A run of blocks with the same holders (a shared system prompt on every replica, a replica's
    // own long history) is walked without touching the result: its holders are applied once, in
    // bulk, when the run ends (see flushRun).
    long runWord = 0L;
    int runStart = 0;
    int span = summary.span();
    for (int chunk = 0; chunk < count; chunk += span) {
      int end = Math.min(count, chunk + span);
      // A whole run of span blocks that every replica still in the match is known to hold on GPU
      // (the run summary) is applied in one step; otherwise it is walked, and claimed afterwards
      // for the replicas that turned out to hold all of it on GPU.
      long runKey = 0L;
      int claiming = 0;
      // (A run of equal holders with more than MAX_CLAIMING of them goes on: nothing to claim.)
      if (chunk > 0 && end - chunk == span && runWord >= 0L) {
        if (runWord != 0L) {
          flushRun(runWord, runStart, chunk, out);
          runWord = 0L;
        }
        int alive = out.aliveAt(chunk);
        if (alive > 0 && alive <= MAX_CLAIMING && !out.anyCovering()) {
          runKey = RunSummary.runKey(promptKeys, chunk, end);
          if (claimed(runKey, alive, out, now)
              && !(anyRuns && predictionStarts(promptKeys, chunk, end, alive, out))) {
            for (int i = 0; i < alive; i++) {
              out.extendRun(out.alive(i), chunk, end, GPU_BIT);
            }
            continue;
          }
          claiming = alive;
          for (int i = 0; i < alive; i++) {
            gpuAtRunStart[i] = out.gpu(out.alive(i));
          }
        }
      }
      for (int block = chunk; block < end; block++) {
        sink += t[2 * Hashing.slot(promptKeys[block], cap)];
      }
      for (int block = chunk; block < end; block++) {
        long key = promptKeys[block];
        PredictedRuns.Run starting = anyRuns ? runs.first(key) : null;
        int s = Hashing.slot(key, cap);
        long word = 0L;
        while (true) {
          long probe = t[2 * s];
          if (probe == key) {
            word = t[2 * s + 1];
            if (stamps != null) {
              stamps[s] = now;
            }
            break;
          }
          if (probe == 0L) {
            break;
          }
          if (++s == cap) {
            s = 0;
          }
        }
        if (claiming > 0) {
          runSlots[block - chunk] = s;
        }
        if (runWord != 0L) {
          if (word != 0L && starting == null && nodes.sameHolders(word, runWord)) {
            continue;
          }
          flushRun(runWord, runStart, block, out);
          runWord = 0L;
        }
        for (PredictedRuns.Run run = starting; run != null; run = run.next) {
          if (out.matched(run.replica) == block) {
            out.cover(run.replica, block + PredictedRuns.common(promptKeys, block, count, run));
          }
        }
        boolean any = false;
        if (word >= 0) {
          for (int e = 0; e < INLINE; e++) {
            int entry = (int) (word >>> (16 * e)) & 0xFFFF;
            if (entry != 0) {
              any |= out.extend(entry >>> 4, block, entry & REAL_BITS);
            }
          }
        } else {
          char[] list = overflow[(int) word];
          for (int e = 1, n = list[0]; e <= n; e++) {
            int entry = list[e];
            any |= out.extend(entry >>> 4, block, entry & REAL_BITS);
          }
        }
        if (any && !out.anyCovering()) {
          // The next blocks with these holders extend exactly the holders that just extended.
          runWord = word;
          runStart = block + 1;
        }
        if (anyRuns) {
          any |= out.extendCovered(block);
        }
        if (!any) {
          prefetchSink = sink;
          return;
        }
      }
      if (claiming > 0) {
        if (runWord != 0L) {
          flushRun(runWord, runStart, end, out);
          runWord = 0L;
        }
        for (int i = 0; i < claiming; i++) {
          int replica = out.alive(i);
          if (out.matched(replica) == end && out.gpu(replica) - gpuAtRunStart[i] == span) {
            for (int b = 0; b < span; b++) {
              nodes.markClaimed(runSlots[b], replica);
            }
            summary.claim(runKey, replica, promptKeys, chunk, end, now);
          }
        }
      }
    }
    if (runWord != 0L) {
      flushRun(runWord, runStart, count, out);
    }
    prefetchSink = sink;
  }

  /**
   * True when each of the first {@code alive} replicas still in the match holds the run; their
   * claims are stamped {@code now} (the budget's clock, 0 without one).
   */
  private boolean claimed(long runKey, int alive, MatchResult out, int now) {
    for (int i = 0; i < alive; i++) {
      if (!summary.holds(runKey, out.alive(i), now)) {
        return false;
      }
    }
    return true;
  }

  /** True when a predicted run of a replica still in the match starts within the blocks. */
  private boolean predictionStarts(long[] keys, int from, int to, int alive, MatchResult out) {
    for (int block = from; block < to; block++) {
      for (PredictedRuns.Run run = runs.first(keys[block]); run != null; run = run.next) {
        for (int i = 0; i < alive; i++) {
          if (out.alive(i) == run.replica) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * Applies blocks {@code [from, to)}, all held by the entries of {@code word} and covered by no
   * predicted run, to every holder that has matched up to {@code from}.
   */
  private void flushRun(long word, int from, int to, MatchResult out) {
    if (from >= to) {
      return;
    }
    if (word >= 0) {
      for (int e = 0; e < INLINE; e++) {
        int entry = (int) (word >>> (16 * e)) & 0xFFFF;
        if (entry != 0) {
          out.extendRun(entry >>> 4, from, to, entry & REAL_BITS);
        }
      }
    } else {
      char[] list = nodes.overflow[(int) word];
      for (int e = 1, n = list[0]; e <= n; e++) {
        out.extendRun(list[e] >>> 4, from, to, list[e] & REAL_BITS);
      }
    }
  }
}
