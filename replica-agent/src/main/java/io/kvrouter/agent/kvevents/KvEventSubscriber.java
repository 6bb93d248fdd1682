package io.kvrouter.agent.kvevents;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * Subscribes to one engine's KV events over ZMQ (JeroMQ SUB) on its own daemon thread, decodes
 * them with {@link VllmEventDecoder} and hands them, in sequence order, to an
 * {@link EngineStreamHandler}. Never runs on an actor dispatcher.
 *
 * <p>Sequencing ({@code shared/specs/vllm-kv-events.md} §1.2, §1.3, §7):
 *
 * <ul>
 *   <li>live messages are {@code [topic, seq8, payload]} (a 2-frame {@code [seq8, payload]} is
 *       tolerated);
 *   <li>on the first message, and after an engine restart, a seq above 0 means earlier batches
 *       were missed (the slow joiner, or a running engine): they are asked for from the replay
 *       socket starting at 0;
 *   <li>a seq above the expected one is a gap: replay from the expected seq; what the buffer no
 *       longer holds is reported as an unrecoverable gap;
 *   <li>a seq below the expected one is an engine restart;
 *   <li>after 2 s without live messages the replay socket is asked for anything newer; if it has
 *       some, the SUB is stuck and is recreated (without a replay socket the SUB is recreated on
 *       every such silence);
 *   <li>replay uses a DEALER sending {@code ["", seq8]} and reads replies of 2 frames {@code [seq8,
 *       payload]} or 3 frames {@code [topic, seq8, payload]} after the delimiter until an empty
 *       payload (end marker), bounded by a timeout.
 * </ul>
 */
public final class KvEventSubscriber implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KvEventSubscriber.class);
  private static final int POLL_MILLIS = 50;
  private static final int REPLAY_TIMEOUT_MILLIS = 2_000;
  private static final int MAX_REPLAY_MESSAGES = 1_000_000;
  private static final long SILENCE_NANOS = 2_000_000_000L;

  private final String endpoint;
  private final String replayEndpoint;
  private final String topicFilter;
  private final EngineStreamHandler handler;
  private final String threadName;
  private final VllmEventDecoder decoder = new VllmEventDecoder();
  private final AtomicLong received = new AtomicLong();
  private final AtomicLong replayRequests = new AtomicLong();
  private final AtomicLong malformed = new AtomicLong();
  private final AtomicLong reconnects = new AtomicLong();
  private volatile boolean running = true;
  private Thread thread;
  private long expected = -1;
  private ZMQ.Socket dealer;

  /**
   * @param endpoint the engine's PUB endpoint to connect to, e.g. {@code tcp://127.0.0.1:5557}
   * @param replayEndpoint the engine's ROUTER replay endpoint, or null when it has none
   * @param topicFilter SUB prefix filter ("" for all)
   * @param handler where batches go, called on this subscriber's thread
   * @param threadName the thread's name (say which replica)
   */
  public KvEventSubscriber(String endpoint, String replayEndpoint, String topicFilter,
      EngineStreamHandler handler, String threadName) {
    this.endpoint = endpoint;
    this.replayEndpoint = replayEndpoint;
    this.topicFilter = topicFilter == null ? "" : topicFilter;
    this.handler = handler;
    this.threadName = threadName;
  }

  /** Starts the subscriber thread. */
  public KvEventSubscriber start() {
    thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  /** Messages received live so far. */
  public long received() {
    return received.get();
  }

  /** Replay requests sent so far. */
  public long replayRequests() {
    return replayRequests.get();
  }

  /** SUB sockets recreated after a silence that replay proved to be a stuck subscription. */
  public long reconnects() {
    return reconnects.get();
  }

  /** Payloads that could not be decoded. */
  public long malformed() {
    return malformed.get();
  }

  private void run() {
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket sub = connectSub(ctx);
      if (replayEndpoint != null) {
        dealer = ctx.createSocket(SocketType.DEALER);
        dealer.setLinger(0);
        dealer.setReceiveTimeOut(REPLAY_TIMEOUT_MILLIS);
        dealer.connect(replayEndpoint);
      }
      long lastLive = System.nanoTime();
      while (running) {
        ZMsg msg = ZMsg.recvMsg(sub);
        if (msg == null) {
          if (System.nanoTime() - lastLive > SILENCE_NANOS) {
            // Silence: either the engine is idle or the SUB is stuck (seen with JeroMQ on
            // loopback: a SUB that never receives). Batches in the replay buffer beyond what we
            // have prove the latter; without replay, reconnecting an idle SUB costs nothing.
            long recovered = dealer == null ? 0 : replay(Long.MAX_VALUE);
            if (dealer == null || recovered > 0) {
              if (recovered > 0) {
                log.warn("{}: SUB stuck ({} batches recovered by replay); reconnecting",
                    threadName, recovered);
              }
              sub.close();
              sub = connectSub(ctx);
              reconnects.incrementAndGet();
            }
            lastLive = System.nanoTime();
          }
          continue;
        }
        lastLive = System.nanoTime();
        received.incrementAndGet();
        TransportFrames.Message m = TransportFrames.live(frames(msg));
        if (m == null || m.endOfReplay()) {
          malformed.incrementAndGet();
          continue;
        }
        long seq = m.seq();
        byte[] payload = m.payload();
        onLive(seq, payload);
      }
    } catch (RuntimeException | Error e) {
      if (running) {
        log.error("KV-event subscriber {} stopped", threadName, e);
      }
    }
  }

  private ZMQ.Socket connectSub(ZContext ctx) {
    ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
    sub.setLinger(0);
    sub.setRcvHWM(100_000);
    sub.setReceiveTimeOut(POLL_MILLIS);
    sub.subscribe(topicFilter.getBytes(StandardCharsets.UTF_8));
    sub.connect(endpoint);
    return sub;
  }

  private void onLive(long seq, byte[] payload) {
    if (expected >= 0 && seq < expected) {
      log.info("{}: engine sequence went back from {} to {}: engine restart", threadName,
          expected - 1, seq);
      handler.onEngineRestart(expected - 1, seq);
      expected = -1;
    }
    if (expected < 0) {
      expected = 0;
    }
    if (seq > expected) {
      recover(seq);
    }
    if (seq == expected) {
      deliver(seq, payload);
    }
  }

  /** Replays {@code [expected, upTo)}; reports what it cannot get back. */
  private void recover(long upTo) {
    replay(upTo);
    if (expected < upTo) {
      log.warn("{}: KV-event batches [{}, {}) lost", threadName, expected, upTo);
      handler.onUnrecoverableGap(expected, upTo);
      expected = upTo;
    }
  }

  /**
   * Asks the replay socket for {@code [expected, upTo)} and delivers what comes back in order.
   *
   * @return batches delivered
   */
  private long replay(long upTo) {
    if (dealer == null) {
      return 0;
    }
    if (expected < 0) {
      expected = 0;
    }
    long delivered = 0;
    replayRequests.incrementAndGet();
    dealer.sendMore(new byte[0]);
    dealer.send(ZmqFrames.seq(expected));
    for (int i = 0; i < MAX_REPLAY_MESSAGES; i++) {
      ZMsg reply = ZMsg.recvMsg(dealer);
      if (reply == null) {
        log.warn("{}: replay from {} timed out", threadName, expected);
        break;
      }
      TransportFrames.Message m = TransportFrames.replay(frames(reply));
      if (m == null) {
        malformed.incrementAndGet();
        continue;
      }
      if (m.endOfReplay()) {
        break;
      }
      long seq = m.seq();
      byte[] payload = m.payload();
      if (seq >= expected && seq < upTo) {
        if (seq > expected) {
          handler.onUnrecoverableGap(expected, seq);
        }
        deliver(seq, payload);
        delivered++;
      }
    }
    return delivered;
  }

  private static List<byte[]> frames(ZMsg msg) {
    List<byte[]> out = new ArrayList<>(msg.size());
    msg.forEach(f -> out.add(f.getData()));
    return out;
  }

  private void deliver(long seq, byte[] payload) {
    expected = seq + 1;
    EngineEventBatch batch;
    try {
      batch = decoder.decode(payload);
    } catch (VllmEventDecoder.MalformedBatchException e) {
      malformed.incrementAndGet();
      log.warn("{}: undecodable batch {}: {}", threadName, seq, e.getMessage());
      return;
    }
    handler.onBatch(seq, batch);
  }

  @Override
  public void close() {
    running = false;
    if (thread != null) {
      try {
        thread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
