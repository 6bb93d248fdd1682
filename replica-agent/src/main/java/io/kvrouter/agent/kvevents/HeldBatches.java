package io.kvrouter.agent.kvevents;

import java.util.ArrayDeque;
import java.util.function.LongSupplier;

/**
 * Live batches a {@link StreamSequencer} cannot deliver yet (a replay in front of them went
 * unanswered, or a dropped connection awaits its verdict), in arrival order, and when to ask the
 * engine again. Waiting has limits: {@code maxHeld} batches or {@code giveUpAfter} since the first
 * one, after which the sequencer stops waiting.
 *
 * <p>Cost: one deque entry per held batch. Not thread-safe: its sequencer's thread drives it.
 */
final class HeldBatches {

  private final ArrayDeque<TransportFrames.Message> held = new ArrayDeque<>();
  private final SubscriberSettings settings;
  private final LongSupplier nanoClock;
  private long heldSince;
  private long retryAt;

  HeldBatches(SubscriberSettings settings, LongSupplier nanoClock) {
    this.settings = settings;
    this.nanoClock = nanoClock;
  }

  void add(TransportFrames.Message m) {
    if (held.isEmpty()) {
      heldSince = nanoClock.getAsLong();
    }
    held.addLast(m);
  }

  /** Takes the first held batch out (null when none). */
  TransportFrames.Message takeFirst() {
    return held.pollFirst();
  }

  /** Puts back the batch just taken, still first (it keeps waiting since it first did). */
  void putBack(TransportFrames.Message m) {
    held.addFirst(m);
  }

  /** Forgets every held batch (a new engine process: its buffer supplies what it sent). */
  void clear() {
    held.clear();
  }

  boolean isEmpty() {
    return held.isEmpty();
  }

  int size() {
    return held.size();
  }

  /** The engine may be asked again now. */
  void retryNow() {
    retryAt = nanoClock.getAsLong();
  }

  /** The engine did not answer: ask again after {@code replayRetry}. */
  void retryLater() {
    retryAt = nanoClock.getAsLong() + settings.replayRetry().toNanos();
  }

  /** True when it is time to ask again. */
  boolean due() {
    return nanoClock.getAsLong() - retryAt >= 0;
  }

  /** True when batches have waited past either limit. */
  boolean tooLong() {
    return !held.isEmpty()
        && (held.size() > settings.maxHeld()
            || nanoClock.getAsLong() - heldSince > settings.giveUpAfter().toNanos());
  }

  /** How long the first held batch has waited, for log lines. */
  String waited() {
    return (nanoClock.getAsLong() - heldSince) / 1_000_000 + " ms";
  }
}
