package io.kvrouter.agent.kvevents;

import io.kvrouter.protocol.engine.EngineEventBatch;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sequencing logic of one engine's KV-event stream, free of sockets: it takes live messages
 * (seq, payload), asks a {@link ReplaySource} for what is missing, decides whether the engine it
 * hears is still the one it heard before, and hands decoded batches to an {@link
 * EngineStreamHandler} in engine order. {@link KvEventSubscriber} drives it from its thread.
 *
 * <p>vLLM's publisher ({@code vllm/distributed/kv_events.py}, {@code ZmqEventPublisher}) numbers
 * batches from 0 per process, buffers the very bytes it published and replays them from a seq on;
 * it announces nothing when it starts ({@code docs/kv-events.md}, section 1). Rules
 * (replica-agent/README.md explains them):
 *
 * <ul>
 *   <li><b>Order.</b> A seq above the expected one replays from there; what the engine no longer
 *       holds is {@link EngineStreamHandler#onUnrecoverableGap} (no new epoch while nothing was
 *       delivered since the last one). A seq below the expected one is a restart.
 *   <li><b>A lost reply is a retry.</b> Live batches behind an unanswered replay wait ({@link
 *       HeldBatches}); only after {@code giveUpAfter} are the missing ones declared lost.
 *   <li><b>Continuity or a clean slate.</b> After a dropped connection ({@link #onDisconnected}) or
 *       a failed health check ({@link #onHealthLost}) the blocks delivered are kept only if {@link
 *       Continuity} shows the same process; else a restart. After a drop, live batches wait for
 *       that verdict. An interruption whose replay has not answered for {@code giveUpAfter} (a dead
 *       engine, or a dead data-parallel rank behind a live front-end) is a restart too, with or
 *       without live batches waiting; the stream is taken up afresh if the engine comes back.
 *   <li><b>Audits.</b> On every healthy heartbeat ({@link #onHealthy}) and after a silence ({@link
 *       #audit}) the last batches delivered are compared with the engine's buffer.
 * </ul>
 *
 * <p>A restart starts over: {@link EngineStreamHandler#onEngineRestart}, the new engine's buffer
 * from 0, and the {@link ContinuityListener} hears of it. Replays may deliver batches ahead of
 * live; their live copies are dropped as duplicates.
 *
 * <p>Not thread-safe: one thread drives it. Cost per live message: one decode and one XXH3 pass
 * over the payload; per audit one replay of about {@code auditDepth} batches.
 *
 * <p>Long because the rules above are one state machine over one expected seq; the stores it
 * consults are apart ({@link HeldBatches}, {@link Continuity}, {@link DeliveredDigests}).
 */
public final class StreamSequencer {

  private static final Logger log = LoggerFactory.getLogger(StreamSequencer.class);

  /** Where missed batches come from: the engine's replay socket. */
  @FunctionalInterface
  public interface ReplaySource {
    /** The engine's answer to a replay request from {@code fromSeq}. */
    EngineReplay fetch(long fromSeq);
  }

  /** Hears when a restart cleared what the handler was told (called on the driving thread). */
  @FunctionalInterface
  public interface ContinuityListener {
    void onRestart();
  }

  private final EngineStreamHandler handler;
  private final ReplaySource replay;
  private final String name;
  private final ContinuityListener listener;
  private final VllmEventDecoder decoder = new VllmEventDecoder();
  private final DeliveredDigests recent;
  private final HeldBatches held;
  private final Continuity continuity;
  private long expected = -1;
  private boolean cleanSlate = true;
  private long dupFrom;
  private long dupTo;
  private boolean replayEverHeld;
  private boolean replaySuspended;
  private long unanswered;
  private long malformed;

  /**
   * @param handler where batches go
   * @param replay the replay socket, or null when the engine has none
   * @param name for log lines (say which replica)
   * @param settings retry, give-up and audit settings
   * @param nanoClock monotonic nanoseconds (System::nanoTime outside tests)
   * @param listener hears of restarts
   */
  public StreamSequencer(
      EngineStreamHandler handler,
      ReplaySource replay,
      String name,
      SubscriberSettings settings,
      LongSupplier nanoClock,
      ContinuityListener listener) {
    this.handler = handler;
    this.replay = replay;
    this.name = name;
    this.listener = listener;
    this.recent = new DeliveredDigests(settings.auditDepth());
    this.held = new HeldBatches(settings, nanoClock);
    this.continuity = new Continuity(settings.giveUpAfter(), nanoClock);
  }

  /** With the defaults of {@code reference.conf}, the system clock and no listener. */
  public StreamSequencer(EngineStreamHandler handler, ReplaySource replay, String name) {
    this(handler, replay, name, SubscriberSettings.defaults(), System::nanoTime, () -> {});
  }

  // ---------------------------------------------------------------- inputs

  /** Handles one live message. */
  public void onLive(long seq, byte[] payload) {
    TransportFrames.Message m = new TransportFrames.Message(seq, payload);
    if (continuity.holdLive() || !held.isEmpty()) {
      held.add(m);
      if (held.due() || held.tooLong()) {
        resume(false);
      }
      return;
    }
    if (!accept(m)) {
      held.add(m);
    }
  }

  /** The subscriber lost its connection to the engine (it reconnects by itself). */
  public void onDisconnected() {
    interrupt("the connection to the engine dropped", true);
  }

  /** The engine failed a health check. */
  public void onHealthLost() {
    interrupt("the engine failed a health check", false);
  }

  /**
   * The engine answered a health check.
   *
   * @param processStartSeconds its {@code process_start_time_seconds}, or NaN when it exports none
   */
  public void onHealthy(double processStartSeconds) {
    if (continuity.observe(processStartSeconds)) {
      restart("the engine's process start time changed", -1);
      continuity.startTimeKnown();
      drainHeld();
      return;
    }
    if (continuity.interrupted()) {
      resume(true);
    } else if (held.isEmpty()) {
      audit();
    } else {
      resume(false);
    }
  }

  /**
   * Nothing arrived for a poll interval: retries what waits for an answer, when due. An
   * interruption with nothing held waits for the engine to show it is back (a live batch or a
   * healthy check) rather than asking a replay socket that is likely down, until {@code
   * giveUpAfter}: then the replay is asked once more, and if it still does not answer the
   * interruption is given up (a restart).
   */
  public void onIdle() {
    if ((!held.isEmpty() && (held.due() || held.tooLong())) || proofOverdue()) {
      resume(false);
    }
  }

  /**
   * Compares the batches delivered last with the engine's replay buffer and delivers anything newer
   * (after a live silence, or on a healthy heartbeat). Not before {@code replayRetry} after a
   * request that went unanswered: health checks may come faster than a dead replay socket's
   * timeout, and the driving thread must get back to its socket (where a dropped connection shows).
   *
   * @return batches delivered (more than 0 after a silence proves the live subscription missed
   *     them)
   */
  public long audit() {
    if (replay == null || continuity.interrupted() || !held.isEmpty() || !held.due()) {
      return 0;
    }
    long from = recent.isEmpty() ? Math.max(expected, 0) : recent.oldestSeq();
    EngineReplay r = fetch(from);
    if (!r.complete()) {
      return 0;
    }
    long last = -1;
    for (TransportFrames.Message b : r.batches()) {
      Long d = recent.digestOf(b.seq());
      if (d != null && d != DeliveredDigests.digest(b.payload())) {
        restart("batch " + b.seq() + " in the engine's replay buffer is not the one delivered", -1);
        return 0;
      }
      last = Math.max(last, b.seq());
    }
    if (!recent.isEmpty() && last < expected - 1) {
      if (replayEverHeld) {
        restart(
            "the engine's replay buffer ends at "
                + last
                + ", before batch "
                + (expected - 1)
                + " that was delivered",
            -1);
      }
      return 0;
    }
    expected = Math.max(expected, 0);
    long before = expected;
    long delivered = deliverReplayed(r.batches(), Long.MAX_VALUE);
    aheadOfLive(before);
    return delivered;
  }

  // ---------------------------------------------------------------- sequencing

  /** Delivers or discards {@code m}; false when it must wait for an unanswered replay. */
  private boolean accept(TransportFrames.Message m) {
    long seq = m.seq();
    if (seq >= dupFrom && seq < dupTo) {
      return true; // a replay delivered it moments ago
    }
    if (seq >= dupTo) {
      dupFrom = 0; // live caught up with what replays delivered ahead of it
      dupTo = 0;
    }
    if (expected >= 0 && seq < expected) {
      Long d = recent.digestOf(seq);
      if (d != null && d == DeliveredDigests.digest(m.payload())) {
        return true; // a copy of a batch delivered
      }
      restart("the engine's sequence went back from " + (expected - 1) + " to " + seq, seq);
      if (seq >= dupFrom && seq < dupTo) {
        return true;
      }
    }
    if (expected < 0) {
      expected = 0;
    }
    if (seq > expected) {
      if (replay == null || replaySuspended) {
        lost(expected, seq);
      } else {
        EngineReplay r = fetch(expected);
        if (!r.complete()) {
          return false;
        }
        deliverReplayed(r.batches(), seq);
        if (expected < seq) {
          lost(expected, seq);
        }
      }
    }
    if (seq == expected) {
      deliver(seq, m.payload());
    }
    return true;
  }

  /** Delivers the replayed batches in {@code [expected, upTo)}; returns how many. */
  private long deliverReplayed(List<TransportFrames.Message> batches, long upTo) {
    long n = 0;
    for (TransportFrames.Message b : batches) {
      if (b.seq() < expected || b.seq() >= upTo) {
        continue;
      }
      if (b.seq() > expected) {
        lost(expected, b.seq());
      }
      deliver(b.seq(), b.payload());
      n++;
    }
    return n;
  }

  /**
   * Batches {@code [from, expected)} were delivered by a replay ahead of live: their live copies,
   * still on their way, are duplicates. Extends the window when one is open (two replays may run
   * before live catches up with the first).
   */
  private void aheadOfLive(long from) {
    if (dupTo <= dupFrom) {
      dupFrom = from;
    }
    dupTo = expected;
  }

  private void lost(long from, long to) {
    if (cleanSlate) {
      log.info(
          "{}: taking up the engine's stream at batch {} ([{}, {}) are gone)", name, to, from, to);
    } else {
      log.warn("{}: KV-event batches [{}, {}) lost", name, from, to);
      handler.onUnrecoverableGap(from, to);
    }
    expected = to;
  }

  private void deliver(long seq, byte[] payload) {
    expected = seq + 1;
    recent.add(seq, DeliveredDigests.digest(payload));
    EngineEventBatch batch;
    try {
      batch = decoder.decode(payload);
    } catch (VllmEventDecoder.MalformedBatchException e) {
      malformed++;
      log.warn("{}: undecodable batch {}: {}", name, seq, e.getMessage());
      return;
    }
    cleanSlate = false;
    handler.onBatch(seq, batch);
  }

  private EngineReplay fetch(long from) {
    EngineReplay r = replay.fetch(from);
    if (!r.complete()) {
      unanswered++;
      log.warn("{}: replay from {} went unanswered; asking again later", name, from);
      held.retryLater();
    } else {
      replaySuspended = false;
      replayEverHeld |= !r.batches().isEmpty();
    }
    return r;
  }

  // ---------------------------------------------------------------- waiting

  /** Tries again what waits: the proof of continuity, then the held live batches. */
  private void resume(boolean healthy) {
    boolean overdue = proofOverdue();
    boolean ask = overdue || held.due() && (continuity.holdLive() || healthy);
    if (continuity.interrupted() && ask) {
      prove();
    }
    if (continuity.interrupted() && (overdue || continuity.holdLive() && held.tooLong())) {
      log.warn(
          "{}: continuity unproven {} after the interruption; starting afresh",
          name,
          continuity.waited());
      replaySuspended = true;
      restart("an interruption nothing could prove harmless", -1);
    }
    drainHeld();
  }

  /**
   * The interruption has waited past {@code giveUpAfter} for a replay socket that stays silent.
   * Without a usable replay socket the health check is the proof and no timer gives it up: an
   * engine whose health checks fail keeps its blocks until it answers again.
   */
  private boolean proofOverdue() {
    return continuity.overdue() && replay != null && !replaySuspended;
  }

  private void drainHeld() {
    while (!continuity.holdLive() && !held.isEmpty()) {
      if (held.tooLong()) {
        log.warn(
            "{}: {} live batches waited {} behind an unanswered replay; declaring the missing ones"
                + " lost",
            name,
            held.size(),
            held.waited());
        replaySuspended = true;
      }
      TransportFrames.Message m = held.takeFirst();
      if (!accept(m)) {
        held.putBack(m);
        return;
      }
    }
  }

  // ---------------------------------------------------------------- continuity

  private void interrupt(String why, boolean dropped) {
    if (continuity.interrupt(recent, dropped)) {
      held.retryNow();
      log.info(
          "{}: {}; blocks are kept only if the engine proves to be the same process", name, why);
    }
  }

  private void prove() {
    switch (evidence()) {
      case UNANSWERED -> held.retryLater();
      case SAME -> {
        log.info("{}: the engine is the same process and nothing was missed; blocks kept", name);
        continuity.end();
      }
      case RESTARTED -> restart("the engine is another process (silent restart)", -1);
      case UNPROVEN -> restart("nothing proves the engine is the same process", -1);
    }
  }

  private Continuity.Proof evidence() {
    Continuity.Proof p = continuity.withoutReplay(replay != null && !replaySuspended);
    if (p != null) {
      return p;
    }
    EngineReplay r = fetch(continuity.checkpointSeq());
    if (!r.complete()) {
      return Continuity.Proof.UNANSWERED;
    }
    p = continuity.judge(r.batches());
    if (p == Continuity.Proof.SAME) {
      long before = expected;
      deliverReplayed(r.batches(), Long.MAX_VALUE);
      aheadOfLive(before);
    }
    return p;
  }

  /**
   * A new engine process: clear everything, then take its buffer from 0.
   *
   * @param newSeq the live seq that revealed it, or -1
   */
  private void restart(String why, long newSeq) {
    log.info("{}: {}: engine restart, the replica starts afresh", name, why);
    handler.onEngineRestart(expected - 1, newSeq);
    expected = -1;
    cleanSlate = true;
    recent.clear();
    dupFrom = 0;
    dupTo = 0;
    continuity.newProcess();
    // Held batches may be the old process's last ones; whatever the new one sent is in its buffer.
    held.clear();
    listener.onRestart();
    if (replay != null && !replaySuspended) {
      EngineReplay r = fetch(0);
      if (r.complete()) {
        expected = 0;
        deliverReplayed(r.batches(), Long.MAX_VALUE);
        dupTo = expected;
      }
    }
  }

  // ---------------------------------------------------------------- state

  /** The seq the next delivered batch must have (−1 before the first). */
  long expected() {
    return expected;
  }

  /** True while an interruption waits for its proof. */
  public boolean interrupted() {
    return continuity.interrupted();
  }

  /** Replay requests that went unanswered so far (each was asked again). */
  long unanswered() {
    return unanswered;
  }

  /** Live batches waiting for an answer. */
  int held() {
    return held.size();
  }

  /** Payloads that could not be decoded. */
  public long malformed() {
    return malformed;
  }
}
