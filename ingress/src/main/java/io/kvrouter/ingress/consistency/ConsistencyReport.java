package io.kvrouter.ingress.consistency;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
 * digests and no tracker is unreachable.
 *
 * <p>Cost: O(trackers × streams). Plain data; thread-confined.
 */
public final class ConsistencyReport {

  /** One tracker's answer, or none when it did not answer in time. */
  public record Answer(String ingressId, TrackerView view) {}

  /** A cell's state. */
  public enum State {
    CONVERGED,
    LAGGING,
    DIVERGED
  }

  private record Mark(long epoch, long seq, long count, long digest) {
    boolean sameWatermark(Mark o) {
      return epoch == o.epoch && seq == o.seq;
    }

    boolean before(Mark o) {
      return epoch < o.epoch || (epoch == o.epoch && seq < o.seq);
    }
  }

  /** A replica stream a tracker has applied nothing of. */
  private static final Mark NONE = new Mark(-1, -1, 0, 0);

  /**
   * An origin's reservation stream a tracker has applied nothing of. Reservation streams have no
   * epochs (every origin mark is at epoch 0), so this is the same watermark as an origin's own log
   * before its first reservation, seq -1: a tracker that has not heard of an ingress that has not
   * reserved anything yet is not behind it.
   */
  private static final Mark NO_RESERVATIONS = new Mark(0, -1, 0, 0);

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
          rm.put(m.replicaId(), new Mark(m.epoch(), m.seq(), m.blocks(), m.digest()));
        }
        for (TrackerView.OriginMark m : a.view().origins()) {
          origins.add(m.origin());
          om.put(m.origin(), new Mark(0, m.seq(), m.count(), m.digest()));
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
        cell(
            os.putObject(o),
            originMarks.get(a.ingressId()).getOrDefault(o, NO_RESERVATIONS),
            st,
            newest(originMarks, o, NO_RESERVATIONS),
            false);
      }
    }
    root.put("converged", !lagging && !diverged && !unreachable);
    root.put("lagging", lagging || unreachable);
    root.put("diverged", diverged);
    root.put("generated_at_ms", nowMillis);
    root.set("trackers", trackers);
    ArrayNode rl = root.putArray("replicas");
    replicas.forEach(rl::add);
    ArrayNode ol = root.putArray("origins");
    origins.forEach(ol::add);
    return root;
  }

  private static void cell(ObjectNode c, Mark m, State st, Mark newest, boolean withEpoch) {
    if (withEpoch) {
      c.put("epoch", m.epoch());
    }
    c.put("seq", m.seq());
    c.put(withEpoch ? "blocks" : "count", m.count());
    c.put("digest", Long.toHexString(m.digest()));
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
        Mark first = marks.get(group.get(0)).getOrDefault(stream, none);
        boolean agree =
            group.stream()
                .map(id -> marks.get(id).getOrDefault(stream, none))
                .allMatch(m -> m.count() == first.count() && m.digest() == first.digest());
        for (String id : group) {
          Mark m = marks.get(id).getOrDefault(stream, none);
          State st = !agree ? State.DIVERGED : m.before(newest) ? State.LAGGING : State.CONVERGED;
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
