package io.kvrouter.loadtest.lab;

import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationMark;
import io.kvrouter.protocol.RouteIntent;
import io.kvrouter.protocol.SharedTiming;
import io.kvrouter.tracker.KvTrackerCore;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * How what engines and routers publish reaches the routers of a {@link LabSimulation}: KV-event
 * batches and load reports from the engines to every router, reservation events from one router to
 * its peers (only when the policy reads the reservation plane), each at once when the propagation
 * delay is 0 and otherwise as a {@link #DELIVER} event on the run's queue, delivered after the
 * delay. Chaos: a batch dropped on the way to a router ({@code dropEvents}) arrives empty, so the
 * router's sequence stays gap-free and it relies on its predicted entries; what a killed replica
 * sent is not delivered once it is dead.
 *
 * <p>Cost: O(routers) per publication. Single-threaded; one instance per run.
 */
final class LabNetwork {

  /** The queue's event kind of a delayed delivery; its payload is what arrives. */
  static final int DELIVER = 2;

  private final KvTrackerCore[] routers;
  private final LabEventQueue queue;
  private final long delayMicros;
  private final double dropEvents;
  private final boolean peerReservations;
  private final SplittableRandom chaos;
  private final Map<String, Integer> replicaIndex;
  private final boolean[] dead;

  /**
   * @param dropEvents the chance that a batch reaches a router empty
   * @param peerReservations whether the policy reads its peers' reservations
   * @param replicaIndex each replica's index in {@code dead}
   * @param dead which replicas were killed (read at delivery)
   */
  LabNetwork(
      KvTrackerCore[] routers,
      LabEventQueue queue,
      long delayMicros,
      double dropEvents,
      boolean peerReservations,
      SplittableRandom chaos,
      Map<String, Integer> replicaIndex,
      boolean[] dead) {
    this.routers = routers;
    this.queue = queue;
    this.delayMicros = delayMicros;
    this.dropEvents = dropEvents;
    this.peerReservations = peerReservations;
    this.chaos = chaos;
    this.replicaIndex = replicaIndex;
    this.dead = dead;
  }

  /**
   * An engine's pass produced {@code batch}: every router gets it (or, by chance, an empty one).
   */
  void publish(long now, KvEventBatch batch) {
    if (dropEvents == 0) {
      sendAll(now, -1, batch);
      return;
    }
    for (int r = 0; r < routers.length; r++) {
      KvEventBatch b = batch;
      if (dropEvents > 0 && chaos.nextDouble() < dropEvents) {
        b = new KvEventBatch(batch.replicaId(), batch.epoch(), batch.seq(), new KvEvent[0]);
      }
      send(now, r, b);
    }
  }

  /** An engine reported its load: every router gets it. */
  void report(long now, ReplicaLoad load) {
    sendAll(now, -1, load);
  }

  /** Router {@code from} reserved, released or expired: its peers get it when they read it. */
  void broadcast(long now, int from, ReservationEvent event) {
    if (event == null || routers.length == 1 || !peerReservations) {
      return;
    }
    toPeers(now, from, event);
  }

  /** A router's heartbeat on the reservation plane: its next reservation seq. */
  record Heartbeat(ReservationMark mark) {}

  /**
   * Router {@code from}'s heartbeat, as an ingress publishes its mark every {@code
   * reservation-mark-interval}: its peers count it among the live routers whether or not it has
   * reserved lately.
   */
  void heartbeat(long now, int from) {
    if (routers.length == 1 || !peerReservations) {
      return;
    }
    toPeers(now, from, new Heartbeat(routers[from].ownMark()));
  }

  /**
   * Before the first request: every router has heard each peer's heartbeat and, when the policy
   * shares one, its timing model, as the ingresses of a cluster that was up before the traffic came
   * have. Without it the routers of a run would decide a burst at its start as if each were alone,
   * which no running cluster does.
   */
  void introduce(long now) {
    if (routers.length == 1 || !peerReservations) {
      return;
    }
    for (int from = 0; from < routers.length; from++) {
      Heartbeat beat = new Heartbeat(routers[from].ownMark());
      SharedTiming timing = routers[from].coordination().timingToShare();
      for (int r = 0; r < routers.length; r++) {
        if (r != from) {
          deliver(now, r, beat);
          if (timing != null) {
            deliver(now, r, new Timing("ingress-" + from, timing));
          }
        }
      }
    }
  }

  /** What a router tells its peers of a request it holds: they decide around it. */
  record Intent(String origin, RouteIntent intent) {}

  /**
   * Router {@code from}, whose policy reads intents, will decide a request it holds as {@code
   * intent} says: its peers hear of it, as an ingress's reservation plane carries it (the uncached
   * tokens per replica as the origin saw them).
   */
  void announce(long now, int from, RouteIntent intent) {
    Intent announced = new Intent("ingress-" + from, intent);
    toPeers(now, from, announced);
  }

  /** A router's timing model, shared with its peers under intents. */
  record Timing(String origin, SharedTiming timing) {}

  /** Router {@code from} shares its timing model with its peers, when its policy does. */
  void shareTiming(long now, int from) {
    SharedTiming timing = routers.length == 1 ? null : routers[from].coordination().timingToShare();
    if (timing == null) {
      return;
    }
    toPeers(now, from, new Timing("ingress-" + from, timing));
  }

  /** {@code payload} from router {@code from} to every other router, after the delay. */
  private void toPeers(long now, int from, Object payload) {
    sendAll(now, from, payload);
  }

  /**
   * What one sender sends every router but {@code except} (-1: none) at once: one queue event that
   * reaches them in router order when it is due. The routers' separate events would be due at the
   * same time and queued one after another, so nothing else could come between them: the same
   * deliveries, in the same order, for one queue operation instead of one per router (at 32 routers
   * and 256 replicas the queue had been a tenth of the lab's time).
   */
  record FanOut(int except, Object payload) {}

  private void sendAll(long now, int except, Object payload) {
    if (delayMicros == 0 || routers.length == 1) {
      for (int r = 0; r < routers.length; r++) {
        if (r != except) {
          send(now, r, payload);
        }
      }
      return;
    }
    queue.push(
        now + delayMicros, DELIVER, except, 0, new FanOut(except, payload), keepsRunGoing(payload));
  }

  /** Load reports, timings and heartbeats keep no run going: a run ends when only they are left. */
  private static boolean keepsRunGoing(Object payload) {
    return !(payload instanceof ReplicaLoad
        || payload instanceof Timing
        || payload instanceof Heartbeat);
  }

  private void send(long now, int router, Object payload) {
    if (delayMicros == 0) {
      deliver(now, router, payload);
    } else {
      queue.push(now + delayMicros, DELIVER, router, 0, payload, keepsRunGoing(payload));
    }
  }

  /** {@code payload} reaches {@code router} now (a {@link #DELIVER} event, or no delay). */
  void deliver(long now, int router, Object payload) {
    if (payload instanceof FanOut f) {
      for (int r = 0; r < routers.length; r++) {
        if (r != f.except()) {
          deliver(now, r, f.payload());
        }
      }
    } else if (payload instanceof ReplicaLoad load) {
      if (!dead[replicaIndex.get(load.replicaId())]) {
        routers[router].loadReported(load);
      }
    } else if (payload instanceof KvEventBatch b) {
      Integer replica = replicaIndex.get(b.replicaId());
      if (replica != null && !dead[replica]) {
        routers[router].apply(b);
      }
    } else if (payload instanceof Timing t) {
      routers[router].coordination().peerTiming(t.origin(), t.timing(), now / 1000);
    } else if (payload instanceof Heartbeat h) {
      routers[router].peerBehind(h.mark(), now / 1000);
    } else if (payload instanceof Intent i) {
      routers[router].coordination().peerIntent(i.origin(), i.intent(), now / 1000);
    } else {
      routers[router].applyReservation((ReservationEvent) payload, now / 1000);
    }
  }
}
