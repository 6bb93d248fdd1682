package io.kvrouter.loadtest.lab;

import java.util.PriorityQueue;

/**
 * The lab's discrete-event queue: events in time order, ties in the order they were scheduled, and
 * a count of the scheduled events that keep a run going ("work"; periodic ticks and what they send
 * do not), so a tick can tell when the run is over.
 *
 * <p>Cost: O(log n) per push and poll. Single-threaded.
 */
final class LabEventQueue {

  /** One scheduled event; {@code order} keeps ties in scheduling order. */
  record Event(
      long time, long order, int kind, int target, int arg, Object payload, boolean work) {}

  private final PriorityQueue<Event> queue =
      new PriorityQueue<>(
          (a, b) ->
              a.time != b.time ? Long.compare(a.time, b.time) : Long.compare(a.order, b.order));
  private long order;
  private long pendingWork;

  /** Schedules an event at {@code time}; {@code work}: it keeps the run going. */
  void push(long time, int kind, int target, int arg, Object payload, boolean work) {
    if (work) {
      pendingWork++;
    }
    queue.add(new Event(time, order++, kind, target, arg, payload, work));
  }

  /** The next event, null when none is left. */
  Event poll() {
    Event e = queue.poll();
    if (e != null && e.work) {
      pendingWork--;
    }
    return e;
  }

  /** True while a scheduled event that keeps the run going is still to come. */
  boolean workPending() {
    return pendingWork > 0;
  }
}
