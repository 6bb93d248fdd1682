package io.kvrouter.ingress.traffic;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which programs in mid-session are held on their bound replica ({@link SessionRouter}): held, a
 * session's turn must run there, even when the replica is busy. Every bound session's history (its
 * latest prompt: a turn sends its whole history) is counted on its replica; a session is held
 * unless its history no longer fits, beside the others counted there, in {@code share} of its
 * replica's KV cache while another replica has room for it (without {@code holdFitting}: whenever
 * another replica has room for it). So a program whose history would evict the others' may move to
 * a replica with room (the policy decides where), and when no replica has room (an overloaded
 * cluster, where moving only recomputes the whole history and evicts another's) every program
 * stays. Holding every program regardless keeps long histories pinned where they evict each other
 * even while other replicas have room; holding none lets an overloaded router balance programs away
 * from their history (docs/benchmarks.md, "Agents in the lab"). A session unseen for {@code idle}
 * is forgotten, so a finished program frees its room. With {@code queueExcess} the session router
 * also lets a session go from a replica that owes much more uncached prefill than another ({@link
 * #queueAllows}, {@link PrefillQueue}).
 *
 * <p>Cost: O(sessions counted) per {@link #admit}, 100 bytes or so per session counted. Thread-safe
 * (one lock; the ingress decides on many threads).
 */
public final class ProgramHold {

  /**
   * The hold's settings ({@value #PATH}).
   *
   * @param replicaCacheTokens the KV-cache tokens of one replica (vLLM's {@code num_gpu_blocks}
   *     times its block size); 0: nothing is held
   * @param share the share of that cache the histories counted on one replica may fill together
   * @param idle a session unseen for this long is no longer counted
   * @param holdFitting whether a session whose history fits on its replica is held even while
   *     another replica has room (off: sessions are held only when no other replica has room)
   * @param queueExcess the queue test ({@link SessionRouter}): a session is not held while its
   *     replica owes more uncached prefill than the least-owed replica by over this many times its
   *     history's tokens (what moving it costs: its history recomputed elsewhere); 0: no test
   */
  public record Settings(
      long replicaCacheTokens,
      double share,
      Duration idle,
      boolean holdFitting,
      double queueExcess) {

    /** Where the settings live. */
    public static final String PATH = "kvrouter.ingress.programs.hold";

    public Settings {
      if (replicaCacheTokens < 0) {
        throw new IllegalArgumentException(
            PATH + ".replica-cache-tokens must be >= 0, was " + replicaCacheTokens);
      }
      if (!(share > 0 && share <= 1)) {
        throw new IllegalArgumentException(PATH + ".share must be in (0, 1], was " + share);
      }
      if (idle.isNegative() || idle.isZero()) {
        throw new IllegalArgumentException(PATH + ".idle must be > 0, was " + idle);
      }
      if (!(queueExcess >= 0) || Double.isInfinite(queueExcess)) {
        throw new IllegalArgumentException(
            PATH + ".queue-excess must be a finite number >= 0, was " + queueExcess);
      }
    }

    /** Without the queue test. */
    public Settings(long replicaCacheTokens, double share, Duration idle, boolean holdFitting) {
      this(replicaCacheTokens, share, idle, holdFitting, 0);
    }

    public static Settings fromConfig(Config config) {
      Config c = config.getConfig(PATH);
      return new Settings(
          c.getLong("replica-cache-tokens"),
          c.getDouble("share"),
          c.getDuration("idle"),
          c.getBoolean("hold-fitting"),
          c.getDouble("queue-excess"));
    }

    /** Whether anything is held. */
    public boolean enabled() {
      return replicaCacheTokens > 0;
    }
  }

  private record Held(String replica, long tokens, long touchedMillis) {}

  private final long budgetTokens;
  private final long idleMillis;
  private final boolean holdFitting;
  private final double queueExcess;

  /** Held sessions by replica, then by session, least recently touched first. */
  private final Map<String, LinkedHashMap<String, Held>> byReplica = new HashMap<>();

  private final Map<String, Held> bySession = new HashMap<>();

  public ProgramHold(Settings settings) {
    if (!settings.enabled()) {
      throw new IllegalArgumentException(
          Settings.PATH + ".replica-cache-tokens is 0: nothing to hold");
    }
    this.budgetTokens = (long) (settings.replicaCacheTokens() * settings.share());
    this.idleMillis = settings.idle().toMillis();
    this.holdFitting = settings.holdFitting();
    this.queueExcess = settings.queueExcess();
  }

  /**
   * Whether a session held on a replica that owes {@code excessTokens} of uncached prefill beyond
   * the least-owed replica stays held with a history of {@code historyTokens}: yes unless the queue
   * test is on and that excess is over {@code queueExcess} times the history (queueing there would
   * cost more than recomputing the history elsewhere).
   */
  public boolean queueAllows(long excessTokens, long historyTokens) {
    return queueExcess <= 0 || excessTokens <= queueExcess * historyTokens;
  }

  /** Whether the queue test is on. */
  public boolean testsQueues() {
    return queueExcess > 0;
  }

  /**
   * Whether {@code session}, bound to {@code replica} and now sending a history of {@code
   * historyTokens}, is held there at {@code nowMillis}: yes when no other replica has room for it,
   * or (with {@code holdFitting}) when it fits beside the others counted on {@code replica}; no
   * otherwise. Either way it is counted on {@code replica} from now on.
   */
  public synchronized boolean admit(
      String session, String replica, long historyTokens, long nowMillis) {
    release(session);
    boolean fitsHome = true;
    boolean roomElsewhere = false;
    for (Map.Entry<String, LinkedHashMap<String, Held>> r : byReplica.entrySet()) {
      long counted = counted(r.getValue(), nowMillis);
      if (r.getKey().equals(replica)) {
        fitsHome = counted + historyTokens <= budgetTokens;
      } else {
        roomElsewhere |= counted + historyTokens <= budgetTokens;
      }
    }
    Held h = new Held(replica, historyTokens, nowMillis);
    byReplica.computeIfAbsent(replica, r -> new LinkedHashMap<>()).put(session, h);
    bySession.put(session, h);
    return (holdFitting && fitsHome) || !roomElsewhere;
  }

  /** The tokens counted in {@code held}, forgetting sessions idle past the setting. */
  private long counted(LinkedHashMap<String, Held> held, long nowMillis) {
    long sum = 0;
    for (Iterator<Map.Entry<String, Held>> it = held.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Held> e = it.next();
      if (nowMillis - e.getValue().touchedMillis() > idleMillis) {
        it.remove();
        bySession.remove(e.getKey());
      } else {
        sum += e.getValue().tokens();
      }
    }
    return sum;
  }

  /** Drops {@code session}'s hold, if any (it moved or ended). */
  public synchronized void release(String session) {
    Held h = bySession.remove(session);
    if (h != null) {
      byReplica.get(h.replica()).remove(session);
    }
  }

  /** The history tokens counted on {@code replica} (idle sessions included until next admitted). */
  public synchronized long heldTokens(String replica) {
    LinkedHashMap<String, Held> held = byReplica.get(replica);
    return held == null ? 0 : held.values().stream().mapToLong(Held::tokens).sum();
  }
}
