package io.kvrouter.loadtest.baselines;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Dynamo's {@code router_replica_sync}: each router publishes its own requests' active-sequence
 * events and applies its peers' to its own per-worker view, as if it had placed them (ai-dynamo/
 * dynamo {@code lib/kv-router/src/sequences/replica_sync.rs} at 057096c3, {@code
 * apply_replica_event}: {@code AddRequest} carries the request's worker and its prompt's block
 * hashes, {@code token_sequence}, with its prefill tokens; {@code MarkPrefillCompleted} and {@code
 * Free} name the request). Events go out as they happen over the event plane (NATS), one by one, no
 * batching at the sender; a receiver applies what has arrived in batches of up to 256 events or 1
 * ms. So here a peer's event arrives after the network delay alone ({@link PeerGroup#delayMillis}),
 * and a router applies everything that has arrived before it decides.
 *
 * <p>This channel carries the block hashes ({@code AddRequest}, {@code Free}); the prefill tokens
 * travel on the lab's reservation plane, which carries them the same way (a reservation, its
 * prefill's end and its release, after the propagation delay).
 *
 * <p>Cost: O(prompt blocks) per event and receiver; the events wait in one queue per receiver.
 */
final class ReplicaSync {

  /**
   * A peer's event: {@code keys} is the request's prompt blocks on {@code replica} for an {@code
   * AddRequest}, null for a {@code Free}.
   */
  record Event(long arrivesMillis, String requestId, int replica, long[] keys) {}

  /** What applies a peer's event to a router's view. */
  interface Receiver {
    void apply(Event event);
  }

  private final long delayMillis;
  private final List<ArrayDeque<Event>> inboxes = new ArrayList<>();

  ReplicaSync(long delayMillis) {
    this.delayMillis = delayMillis;
  }

  /** A new router joins; returns its index. */
  int join() {
    inboxes.add(new ArrayDeque<>());
    return inboxes.size() - 1;
  }

  /** Router {@code from} added a request: its peers get it after the delay. */
  void added(int from, long nowMillis, String requestId, int replica, long[] keys, int count) {
    publish(
        from,
        new Event(
            nowMillis + delayMillis, requestId, replica, java.util.Arrays.copyOf(keys, count)));
  }

  /** Router {@code from}'s request ended: its peers free it after the delay. */
  void freed(int from, long nowMillis, String requestId) {
    publish(from, new Event(nowMillis + delayMillis, requestId, -1, null));
  }

  private void publish(int from, Event e) {
    for (int r = 0; r < inboxes.size(); r++) {
      if (r != from) {
        inboxes.get(r).add(e);
      }
    }
  }

  /**
   * Router {@code to} is about to decide at {@code nowMillis}: it applies the peers' events that
   * have arrived, in arrival order. The lab publishes in time order and the delay is fixed, so each
   * inbox is in arrival order.
   */
  void deliver(int to, long nowMillis, Receiver receiver) {
    ArrayDeque<Event> inbox = inboxes.get(to);
    while (!inbox.isEmpty() && inbox.peek().arrivesMillis() <= nowMillis) {
      receiver.apply(inbox.poll());
    }
  }
}
