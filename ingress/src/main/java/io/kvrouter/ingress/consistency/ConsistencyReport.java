package io.kvrouter.ingress.consistency;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.TrackerReport;
import io.kvrouter.protocol.TrackerView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The cluster-wide consistency view, computed from every tracker's {@link TrackerView} ({@code
 * docs/architecture.md}, "Consistency, stated"): for each replica (and each origin ingress's
 * reservation stream), trackers at the newest watermark are <em>converged</em> when their digests
 * agree; trackers behind the newest watermark are <em>lagging</em> (propagation delay); trackers at
 * an equal watermark with different digests are <em>diverged</em> (a bug). The whole cluster is
 * converged when every reachable tracker is at the newest watermark of every stream with equal
 * digests and no tracker is unreachable. A tracker whose index memory budget evicted blocks of a
 * replica is <em>trimmed</em> there: its digest is of what it still holds, so it is left out of the
 * comparison, and the cluster is not called converged while it lasts (until the replica's next
 * epoch clears it).
 *
 * <p>Converged is not accurate (ARCHITECTURE.md, "Truth, stated"): trackers can agree on a picture
 * the engine does not hold. So {@code per_replica} puts beside each replica's convergence its
 * accuracy, from what every ingress saw of its predictions against the engine's reported cached
 * tokens ({@link TrackerReport.Accuracy}): {@code accurate} is false while any ingress flags the
 * replica, null before any ingress has a sample, and the top-level {@code accurate} is false when
 * some replica is not.
 *
 * <p>Cost: O(trackers × streams). Plain data; thread-confined.
 */
public final class ConsistencyReport {

  /** One tracker's answer ({@code report}), or none when it did not answer in time. */
  public record Answer(String ingressId, TrackerReport report) {

    /** An answer of a view alone (nothing trimmed, no accuracy figures). */
    public static Answer of(String ingressId, TrackerView view) {
      return new Answer(ingressId, view == null ? null : TrackerReport.of(view));
    }

    /** The tracker's view, or null when it did not answer. */
    public TrackerView view() {
      return report == null ? null : report.view();
    }
  }

  /** A cell's state. */
  public enum State {
    CONVERGED,
    LAGGING,
    DIVERGED,
    /**
     * This tracker's index memory budget evicted blocks of the replica: its digest is of what it
     * still holds, not comparable with the others' (an operator's matter, not a bug).
     */
    TRIMMED
  }

  private record Mark(long epoch, long seq, long count, long digest, long trimmed) {
    boolean sameWatermark(Mark o) {
      return epoch == o.epoch && seq == o.seq;
    }

    boolean before(Mark o) {
      return epoch < o.epoch || (epoch == o.epoch && seq < o.seq);
    }
  }

  /** A replica stream a tracker has applied nothing of. */
  private static final Mark NONE = new Mark(-1, -1, 0, 0, 0);

  /**
   * An origin's reservation stream a tracker has applied nothing of. Reservation streams have no
   * epochs (every origin mark is at epoch 0), so this is the same watermark as an origin's own log
   * before its first reservation, seq -1: a tracker that has not heard of an ingress that has not
   * reserved anything yet is not behind it.
   */
  private static final Mark NO_RESERVATIONS = new Mark(0, -1, 0, 0, 0);

  private final List<Answer> answers;
  private int divergedCells;

  private ConsistencyReport(List<Answer> answers) {
    this.answers = answers;
  }

  /** Builds the report from every tracker's answer. */
  public static ConsistencyReport of(List<Answer> answers) {
    return new ConsistencyReport(List.copyOf(answers));
  }

  /** Cells diverged at equal watermarks (for the mismatch counter). */
  public int divergedCells() {
    return divergedCells;
  }

  /** The JSON served at {@code GET /admin/consistency}. */
  public ObjectNode toJson(long nowMillis) {
    TreeSet<String> replicas = new TreeSet<>();
    TreeSet<String> origins = new TreeSet<>();
    Map<String, Map<String, Mark>> replicaMarks = new HashMap<>();
    Map<String, Map<String, Mark>> originMarks = new HashMap<>();
    for (Answer a : answers) {
      Map<String, Mark> rm = new HashMap<>();
      Map<String, Mark> om = new HashMap<>();
      if (a.view() != null) {
        for (TrackerView.ReplicaMark m : a.view().replicas()) {
          replicas.add(m.replicaId());
          rm.put(
              m.replicaId(),
              new Mark(
                  m.epoch(), m.seq(), m.blocks(), m.digest(), a.report().trimmed(m.replicaId())));
        }
        for (TrackerView.OriginMark m : a.view().origins()) {
          origins.add(m.origin());
          om.put(m.origin(), new Mark(0, m.seq(), m.count(), m.digest(), 0));
        }
      }
      replicaMarks.put(a.ingressId(), rm);
      originMarks.put(a.ingressId(), om);
    }
    divergedCells = 0;
    Map<String, Map<String, State>> replicaStates = states(replicas, replicaMarks, NONE);
    Map<String, Map<String, State>> originStates = states(origins, originMarks, NO_RESERVATIONS);

    boolean lagging = false;
    boolean diverged = false;
    boolean trimmed = false;
    boolean unreachable = false;
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    ArrayNode trackers = JsonNodeFactory.instance.arrayNode();
    for (Answer a : answers) {
      ObjectNode t = trackers.addObject();
      t.put("ingress", a.ingressId());
      t.put("reachable", a.view() != null);
      t.put("ready", a.view() != null && a.view().ready());
      unreachable |= a.view() == null;
      ObjectNode rs = t.putObject("replicas");
      for (String r : replicas) {
        State st = replicaStates.get(a.ingressId()).get(r);
        lagging |= st == State.LAGGING;
        diverged |= st == State.DIVERGED;
        trimmed |= st == State.TRIMMED;
        cell(
            rs.putObject(r),
            replicaMarks.get(a.ingressId()).getOrDefault(r, NONE),
            st,
            newest(replicaMarks, r, NONE),
            true);
      }
      ObjectNode os = t.putObject("origins");
      for (String o : origins) {
        State st = originStates.get(a.ingressId()).get(o);
        lagging |= st == State.LAGGING;
        diverged |= st == State.DIVERGED;
        trimmed |= st == State.TRIMMED;
        cell(
            os.putObject(o),
            originMarks.get(a.ingressId()).getOrDefault(o, NO_RESERVATIONS),
            st,
            newest(originMarks, o, NO_RESERVATIONS),
            false);
      }
    }
    boolean accurate = perReplica(root.putObject("per_replica"), replicas, replicaStates);
    root.put("converged", !lagging && !diverged && !unreachable && !trimmed);
    root.put("accurate", accurate);
    root.put("lagging", lagging || unreachable);
    root.put("diverged", diverged);
    root.put("trimmed", trimmed);
    root.put("generated_at_ms", nowMillis);
    root.set("trackers", trackers);
    ArrayNode rl = root.putArray("replicas");
    replicas.forEach(rl::add);
    ArrayNode ol = root.putArray("origins");
    origins.forEach(ol::add);
    return root;
  }

  /**
   * Per replica, converged (every tracker's cell converged) beside accurate (no ingress flags it);
   * returns false when some replica is known inaccurate.
   */
  private boolean perReplica(
      ObjectNode out, TreeSet<String> replicas, Map<String, Map<String, State>> states) {
    TreeMap<String, int[]> figures = new TreeMap<>(); // samples, misses
    Map<String, List<String>> alertingOn = new HashMap<>();
    for (Answer a : answers) {
      if (a.view() == null) {
        continue;
      }
      for (TrackerReport.Accuracy acc : a.report().accuracy()) {
        int[] f = figures.computeIfAbsent(acc.replicaId(), r -> new int[2]);
        f[0] += acc.samples();
        f[1] += acc.misses();
        if (acc.alerting()) {
          alertingOn.computeIfAbsent(acc.replicaId(), r -> new ArrayList<>()).add(a.ingressId());
        }
      }
    }
    TreeSet<String> all = new TreeSet<>(replicas);
    all.addAll(figures.keySet());
    boolean accurate = true;
    for (String r : all) {
      ObjectNode o = out.putObject(r);
      boolean converged =
          replicas.contains(r)
              && answers.stream()
                  .allMatch(a -> states.get(a.ingressId()).get(r) == State.CONVERGED);
      o.put("converged", converged);
      int[] f = figures.getOrDefault(r, new int[2]);
      List<String> flagged = alertingOn.getOrDefault(r, List.of());
      if (f[0] == 0) {
        o.putNull("accurate");
      } else {
        o.put("accurate", flagged.isEmpty());
      }
      accurate &= flagged.isEmpty();
      o.put("samples", f[0]);
      o.put("mismatch_ratio", f[0] == 0 ? 0 : (double) f[1] / f[0]);
      ArrayNode on = o.putArray("alerting_on");
      flagged.forEach(on::add);
    }
    return accurate;
  }

  private static void cell(ObjectNode c, Mark m, State st, Mark newest, boolean withEpoch) {
    if (withEpoch) {
      c.put("epoch", m.epoch());
    }
    c.put("seq", m.seq());
    c.put(withEpoch ? "blocks" : "count", m.count());
    c.put("digest", Long.toHexString(m.digest()));
    if (withEpoch) {
      c.put("trimmed", m.trimmed());
    }
    c.put("state", st.name().toLowerCase(java.util.Locale.ROOT));
    c.put("lag_seq", m.epoch() == newest.epoch() ? newest.seq() - m.seq() : -1);
  }

  private Map<String, Map<String, State>> states(
      TreeSet<String> streams, Map<String, Map<String, Mark>> marks, Mark none) {
    Map<String, Map<String, State>> out = new HashMap<>();
    for (Answer a : answers) {
      out.put(a.ingressId(), new HashMap<>());
    }
    for (String stream : streams) {
      Mark newest = newest(marks, stream, none);
      // Trackers grouped by watermark: within a group the digests must agree.
      Map<String, List<String>> byWatermark = new TreeMap<>();
      for (Answer a : answers) {
        if (a.view() == null) {
          out.get(a.ingressId()).put(stream, State.LAGGING);
          continue;
        }
        Mark m = marks.get(a.ingressId()).getOrDefault(stream, none);
        byWatermark
            .computeIfAbsent(m.epoch() + ":" + m.seq(), k -> new ArrayList<>())
            .add(a.ingressId());
      }
      for (List<String> group : byWatermark.values()) {
        // Trackers whose budget trimmed the replica hold less than its stream: only the others'
        // digests must agree.
        List<Mark> whole =
            group.stream()
                .map(id -> marks.get(id).getOrDefault(stream, none))
                .filter(m -> m.trimmed() == 0)
                .toList();
        boolean agree =
            whole.stream()
                .allMatch(
                    m -> m.count() == whole.get(0).count() && m.digest() == whole.get(0).digest());
        for (String id : group) {
          Mark m = marks.get(id).getOrDefault(stream, none);
          State st =
              m.trimmed() > 0
                  ? State.TRIMMED
                  : !agree ? State.DIVERGED : m.before(newest) ? State.LAGGING : State.CONVERGED;
          if (st == State.DIVERGED) {
            divergedCells++;
          }
          out.get(id).put(stream, st);
        }
      }
    }
    return out;
  }

  private static Mark newest(Map<String, Map<String, Mark>> marks, String stream, Mark none) {
    Mark newest = none;
    for (Map<String, Mark> m : marks.values()) {
      Mark x = m.getOrDefault(stream, none);
      if (newest.before(x)) {
        newest = x;
      }
    }
    return newest;
  }
}
