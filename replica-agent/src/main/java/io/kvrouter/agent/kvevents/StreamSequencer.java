package io.kvrouter.agent.kvevents;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sequencing logic of one engine's KV-event stream, free of sockets: it takes live messages
 * (seq, payload), asks a {@link ReplaySource} for what is missing and hands decoded batches to an
 * {@link EngineStreamHandler} in engine order. {@link KvEventSubscriber} drives it from its thread.
 *
 * <p>Rules (vLLM's sequence numbers and replay, {@code vllm/distributed/kv_events.py}; described in
 * {@code docs/kv-events.md}, section 1):
 *
 * <ul>
 *   <li>at the start, and after an engine restart, a first seq above 0 means earlier batches were
 *       missed: replay from 0;
 *   <li>a seq above the expected one is a gap: replay from the expected seq; what the replay cannot
 *       supply is reported through {@link EngineStreamHandler#onUnrecoverableGap};
 *   <li>a seq below the expected one is an engine restart ({@link
 *       EngineStreamHandler#onEngineRestart}), then the rules above apply afresh;
 *   <li>after the connection to the engine dropped ({@link #onDisconnected()}), the first batch
 *       that is not the expected one also counts as a restart: a restarted engine that published
 *       more batches than the old one before the subscriber reconnected shows no regression;
 *   <li>{@link #probe()} (after a silence) replays anything newer than the expected seq; live
 *       copies of what it delivered, arriving just after, are dropped as duplicates rather than
 *       mistaken for a restart.
 * </ul>
 *
 * <p>Not thread-safe: one thread drives it. Cost per live message: one decode.
 */
public final class StreamSequencer {

  private static final Logger log = LoggerFactory.getLogger(StreamSequencer.class);

  /** Where missed batches come from: the engine's replay socket. */
  @FunctionalInterface
  public interface ReplaySource {
    /**
     * Batches with seq ≥ {@code fromSeq} still buffered, in order, without the end marker; empty
     * when none or when the socket did not answer.
     */
    List<TransportFrames.Message> fetch(long fromSeq);
  }

  private final EngineStreamHandler handler;
  private final ReplaySource replay;
  private final String name;
  private final VllmEventDecoder decoder = new VllmEventDecoder();
  private long expected = -1;
  private long dupFrom;
  private long dupTo;
  private long replayRequests;
  private long malformed;
  private boolean disconnected;

  /**
   * @param handler where batches go
   * @param replay the replay socket, or null when the engine has none
   * @param name for log lines (say which replica)
   */
  public StreamSequencer(EngineStreamHandler handler, ReplaySource replay, String name) {
    this.handler = handler;
    this.replay = replay;
    this.name = name;
  }

  /** Handles one live message. */
  public void onLive(long seq, byte[] payload) {
    if (seq >= dupFrom && seq < dupTo) {
      return; // the silence probe delivered it moments ago
    }
    dupTo = 0;
    boolean afterDisconnect = disconnected;
    disconnected = false;
    if (afterDisconnect && expected >= 0 && seq != expected) {
      log.info(
          "{}: reconnected to the engine at seq {} instead of {}: engine restart",
          name,
          seq,
          expected);
      handler.onEngineRestart(expected - 1, seq);
      expected = -1;
    } else if (expected >= 0 && seq < expected) {
      log.info(
          "{}: engine sequence went back from {} to {}: engine restart", name, expected - 1, seq);
      handler.onEngineRestart(expected - 1, seq);
      expected = -1;
    }
    if (expected < 0) {
      expected = 0;
    }
    if (seq > expected) {
      replayRange(seq);
      if (expected < seq) {
        log.warn("{}: KV-event batches [{}, {}) lost", name, expected, seq);
        handler.onUnrecoverableGap(expected, seq);
        expected = seq;
      }
    }
    if (seq == expected) {
      deliver(seq, payload);
    }
  }

  /** The subscriber lost its connection to the engine (it reconnects by itself). */
  public void onDisconnected() {
    disconnected = true;
  }

  /**
   * After a silence: replays anything newer than what was delivered.
   *
   * @return batches delivered (more than 0 proves the live subscription missed them)
   */
  public long probe() {
    if (replay == null) {
      return 0;
    }
    long from = Math.max(expected, 0);
    long delivered = replayRange(Long.MAX_VALUE);
    dupFrom = from;
    dupTo = expected;
    return delivered;
  }

  /** Replays {@code [expected, upTo)}; returns the number of batches delivered. */
  private long replayRange(long upTo) {
    if (replay == null) {
      return 0;
    }
    if (expected < 0) {
      expected = 0;
    }
    replayRequests++;
    long delivered = 0;
    for (TransportFrames.Message m : replay.fetch(expected)) {
      if (m.endOfReplay()) {
        break;
      }
      if (m.seq() >= expected && m.seq() < upTo) {
        if (m.seq() > expected) {
          log.warn(
              "{}: KV-event batches [{}, {}) no longer in the replay buffer",
              name,
              expected,
              m.seq());
          handler.onUnrecoverableGap(expected, m.seq());
        }
        deliver(m.seq(), m.payload());
        delivered++;
      }
    }
    return delivered;
  }

  private void deliver(long seq, byte[] payload) {
    expected = seq + 1;
    EngineEventBatch batch;
    try {
      batch = decoder.decode(payload);
    } catch (VllmEventDecoder.MalformedBatchException e) {
      malformed++;
      log.warn("{}: undecodable batch {}: {}", name, seq, e.getMessage());
      return;
    }
    handler.onBatch(seq, batch);
  }

  /** The seq the next delivered batch must have (−1 before the first). */
  public long expected() {
    return expected;
  }

  /** Replay requests made so far. */
  public long replayRequests() {
    return replayRequests;
  }

  /** Payloads that could not be decoded. */
  public long malformed() {
    return malformed;
  }
}
