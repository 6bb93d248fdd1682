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
 * Subscribes to one engine's KV events over ZMQ (JeroMQ SUB) on its own daemon thread, decodes them
 * with {@link VllmEventDecoder} and hands them, in sequence order, to an {@link
 * EngineStreamHandler}. Never runs on an actor dispatcher.
 *
 * <p>Live messages are parsed by {@link TransportFrames} and sequenced by a {@link StreamSequencer}
 * (gap → replay, regression → engine restart, first message above 0 → replay from 0). Replay uses a
 * DEALER sending {@code ["", seq8]} and reads replies until the end marker, bounded by a timeout.
 * After 2 s without live messages the replay socket is probed for anything newer; if it has some,
 * the SUB is stuck (seen with JeroMQ on loopback about once in fifteen fresh connections) and is
 * recreated; without a replay socket the SUB is recreated on every such silence, which costs
 * nothing when the engine is merely idle.
 */
public final class KvEventSubscriber implements AutoCloseable {

  private static final java.util.concurrent.atomic.AtomicLong monitors =
      new java.util.concurrent.atomic.AtomicLong();

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
  private final AtomicLong received = new AtomicLong();
  private final AtomicLong replayRequests = new AtomicLong();
  private final AtomicLong malformed = new AtomicLong();
  private final AtomicLong reconnects = new AtomicLong();
  private volatile boolean running = true;
  private Thread thread;
  private ZMQ.Socket dealer;
  private volatile StreamSequencer sequencer;

  /**
   * @param endpoint the engine's PUB endpoint to connect to, e.g. {@code tcp://127.0.0.1:5557}
   * @param replayEndpoint the engine's ROUTER replay endpoint, or null when it has none
   * @param topicFilter SUB prefix filter ("" for all)
   * @param handler where batches go, called on this subscriber's thread
   * @param threadName the thread's name (say which replica)
   */
  public KvEventSubscriber(
      String endpoint,
      String replayEndpoint,
      String topicFilter,
      EngineStreamHandler handler,
      String threadName) {
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

  /** Messages or payloads that could not be parsed or decoded. */
  public long malformed() {
    StreamSequencer s = sequencer;
    return malformed.get() + (s == null ? 0 : s.malformed());
  }

  private void run() {
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket sub = connectSub(ctx);
      ZMQ.Socket monitor = monitor(ctx, sub);
      if (replayEndpoint != null) {
        dealer = ctx.createSocket(SocketType.DEALER);
        dealer.setLinger(0);
        dealer.setReceiveTimeOut(REPLAY_TIMEOUT_MILLIS);
        dealer.connect(replayEndpoint);
      }
      sequencer =
          new StreamSequencer(handler, dealer == null ? null : this::fetchReplay, threadName);
      long lastLive = System.nanoTime();
      while (running) {
        ZMQ.Event event = ZMQ.Event.recv(monitor, ZMQ.DONTWAIT);
        if (event != null && event.getEvent() == ZMQ.EVENT_DISCONNECTED) {
          sequencer.onDisconnected();
        }
        ZMsg msg = ZMsg.recvMsg(sub);
        if (msg == null) {
          if (System.nanoTime() - lastLive > SILENCE_NANOS) {
            // Silence: either the engine is idle or the SUB is stuck (seen with JeroMQ on
            // loopback: a SUB that never receives). Batches in the replay buffer beyond what we
            // have prove the latter; without replay, reconnecting an idle SUB costs nothing.
            long recovered = sequencer.probe();
            if (dealer == null || recovered > 0) {
              if (recovered > 0) {
                log.warn(
                    "{}: SUB stuck ({} batches recovered by replay); reconnecting",
                    threadName,
                    recovered);
              }
              monitor.close();
              sub.close();
              sub = connectSub(ctx);
              monitor = monitor(ctx, sub);
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
        sequencer.onLive(m.seq(), m.payload());
      }
    } catch (RuntimeException | Error e) {
      if (running) {
        log.error("KV-event subscriber {} stopped", threadName, e);
      }
    }
  }

  /** A socket receiving the SUB's disconnect events (an engine restart drops the connection). */
  private ZMQ.Socket monitor(ZContext ctx, ZMQ.Socket sub) {
    String address = "inproc://kv-events-monitor-" + threadName + "-" + monitors.incrementAndGet();
    sub.monitor(address, ZMQ.EVENT_DISCONNECTED);
    ZMQ.Socket monitor = ctx.createSocket(SocketType.PAIR);
    monitor.setLinger(0);
    monitor.connect(address);
    return monitor;
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

  /** Sends a replay request and collects the answer until the end marker or a timeout. */
  private List<TransportFrames.Message> fetchReplay(long fromSeq) {
    replayRequests.incrementAndGet();
    dealer.sendMore(new byte[0]);
    dealer.send(ZmqFrames.seq(fromSeq));
    List<TransportFrames.Message> out = new ArrayList<>();
    for (int i = 0; i < MAX_REPLAY_MESSAGES; i++) {
      ZMsg reply = ZMsg.recvMsg(dealer);
      if (reply == null) {
        log.warn("{}: replay from {} timed out", threadName, fromSeq);
        break;
      }
      TransportFrames.Message m = TransportFrames.replay(frames(reply));
      if (m == null) {
        malformed.incrementAndGet();
      } else if (m.endOfReplay()) {
        break;
      } else {
        out.add(m);
      }
    }
    return out;
  }

  private static List<byte[]> frames(ZMsg msg) {
    List<byte[]> out = new ArrayList<>(msg.size());
    msg.forEach(f -> out.add(f.getData()));
    return out;
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
