package io.kvrouter.agent.kvevents;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * Subscribes to one engine's KV events over ZMQ (JeroMQ SUB) on its own daemon thread, decodes them
 * and hands them, in sequence order, to an {@link EngineStreamHandler} through a {@link
 * StreamSequencer} (which holds every rule). Never runs on an actor dispatcher; the agent actor
 * talks to it only through {@link #healthLost()} and {@link #healthy}, which queue a command for
 * this thread, and hears back through a {@link Listener}.
 *
 * <p>Replay goes through a {@link ReplayClient} (a DEALER to the engine's replay ROUTER, replaced
 * whenever an answer does not come whole; its Javadoc says why).
 *
 * <p>Connection drops are watched through a ZMQ monitor on the SUB socket, read before and right
 * after each receive. On a drop the sequencer holds live batches until a replay shows which engine
 * sends them, and the SUB is replaced: its queue may still hold the old connection's last messages,
 * which are in the replay buffer if the engine is the same process and stale if it is not. After
 * {@code silence} without live messages the sequencer audits the replay buffer; if that delivers
 * anything the SUB is stuck (seen with JeroMQ on loopback about once in fifteen fresh connections)
 * and is replaced; without a replay socket the SUB is replaced on every such silence, which costs
 * nothing when the engine is merely idle.
 *
 * <p>An unexpected failure on the thread (a bug in decoding or in the handler) does not end it: it
 * is logged at ERROR and counted ({@link #failures()}), the batch it interrupted is reported lost
 * to the handler ({@link EngineStreamHandler#onUnrecoverableGap}: the replica starts a new epoch
 * rather than keep a picture missing that batch), and after {@code restartBackoff} (doubled after
 * each failure in a row without a batch delivered between, at most {@code restartBackoffMax}) the
 * sockets are opened again with the same sequencer: what the engine published meanwhile is a gap
 * that the replay fills as any other. Before, the thread died and the replica's events went unread
 * for good.
 */
public final class KvEventSubscriber implements EngineFeed {

  /** What the agent hears back (called on the subscriber's thread; must not block). */
  public interface Listener {
    /** A restart cleared the replica (a new epoch began). */
    void onRestart();

    /**
     * No interruption is pending as of the health check {@code tick} (the last one {@link #healthy}
     * reported): the replica's blocks are either proven current or were cleared.
     */
    void onSettled(long tick);
  }

  private static final Listener NO_LISTENER =
      new Listener() {
        @Override
        public void onRestart() {}

        @Override
        public void onSettled(long tick) {}
      };

  private static final AtomicLong MONITORS = new AtomicLong();
  private static final Logger log = LoggerFactory.getLogger(KvEventSubscriber.class);

  private final String endpoint;
  private final ReplayClient replay;
  private final String topicFilter;
  private final EngineStreamHandler handler;
  private final Delivery delivery;
  private final String threadName;
  private final SubscriberSettings settings;
  private final Listener listener;
  private final Queue<Runnable> inbox = new ConcurrentLinkedQueue<>();
  private final AtomicLong received = new AtomicLong();
  private final AtomicLong malformed = new AtomicLong();
  private final AtomicLong reconnects = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private volatile boolean running = true;
  private Thread thread;
  private volatile StreamSequencer sequencer;
  private ZContext ctx;
  private ZMQ.Socket sub;
  private ZMQ.Socket monitor;
  private long lastHealthyTick = -1;
  private long settledTick = -1;

  /**
   * @param endpoint the engine's PUB endpoint to connect to, e.g. {@code tcp://127.0.0.1:5557}
   * @param replayEndpoint the engine's ROUTER replay endpoint, or null when it has none
   * @param topicFilter SUB prefix filter ("" for all)
   * @param handler where batches go, called on this subscriber's thread
   * @param threadName the thread's name (say which replica)
   * @param settings waits, retries and audits
   * @param listener hears of restarts and settled interruptions
   */
  public KvEventSubscriber(
      String endpoint,
      String replayEndpoint,
      String topicFilter,
      EngineStreamHandler handler,
      String threadName,
      SubscriberSettings settings,
      Listener listener) {
    this.endpoint = endpoint;
    this.replay =
        replayEndpoint == null ? null : new ReplayClient(replayEndpoint, threadName, settings);
    this.topicFilter = topicFilter == null ? "" : topicFilter;
    this.handler = handler;
    this.delivery = new Delivery(handler);
    this.threadName = threadName;
    this.settings = settings;
    this.listener = listener;
  }

  /** With the defaults of {@code reference.conf} and nobody listening. */
  public KvEventSubscriber(
      String endpoint,
      String replayEndpoint,
      String topicFilter,
      EngineStreamHandler handler,
      String threadName) {
    this(
        endpoint,
        replayEndpoint,
        topicFilter,
        handler,
        threadName,
        SubscriberSettings.defaults(),
        NO_LISTENER);
  }

  /** Starts the subscriber thread. */
  public KvEventSubscriber start() {
    thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  /** The engine failed a health check (thread-safe; handled on the subscriber's thread). */
  public void healthLost() {
    inbox.add(() -> sequencer.onHealthLost());
  }

  /**
   * The engine answered health check {@code tick} (thread-safe; handled on the subscriber's
   * thread).
   *
   * @param processStartSeconds its {@code process_start_time_seconds}, or NaN when it has none
   */
  public void healthy(long tick, double processStartSeconds) {
    inbox.add(
        () -> {
          lastHealthyTick = Math.max(lastHealthyTick, tick);
          sequencer.onHealthy(processStartSeconds);
        });
  }

  /** Messages received live so far. */
  public long received() {
    return received.get();
  }

  /** Replay requests sent so far. */
  public long replayRequests() {
    return replay == null ? 0 : replay.requests();
  }

  /** SUB sockets recreated after a silence that replay proved to be a stuck subscription. */
  public long reconnects() {
    return reconnects.get();
  }

  /** Unexpected failures the subscriber's thread started again after. */
  public long failures() {
    return failures.get();
  }

  /** Messages or payloads that could not be parsed or decoded. */
  public long malformed() {
    StreamSequencer s = sequencer;
    return malformed.get()
        + (replay == null ? 0 : replay.malformed())
        + (s == null ? 0 : s.malformed());
  }

  /** Runs the subscriber until {@link #close}, starting it again after unexpected failures. */
  private void run() {
    Duration backoff = settings.restartBackoff();
    while (running) {
      try (ZContext context = new ZContext()) {
        ctx = context;
        listen();
        return;
      } catch (RuntimeException e) {
        if (!running) {
          return;
        }
        long lost = delivery.failed();
        long n = failures.incrementAndGet();
        if (delivery.deliveredSinceFailure()) {
          backoff = settings.restartBackoff();
        }
        log.error(
            "KV-event subscriber {} failed (failure {}); batch {} is reported lost (a new epoch)"
                + " and the subscriber starts again in {} ms",
            threadName,
            n,
            lost,
            backoff.toMillis(),
            e);
        try {
          handler.onUnrecoverableGap(lost, lost + 1);
        } catch (RuntimeException again) {
          log.error(
              "KV-event subscriber {}: the handler failed on the lost batch", threadName, again);
        }
        pause(backoff);
        Duration doubled = backoff.multipliedBy(2);
        backoff =
            doubled.compareTo(settings.restartBackoffMax()) > 0
                ? settings.restartBackoffMax()
                : doubled;
      } catch (Error e) {
        if (running) {
          log.error("KV-event subscriber {} stopped", threadName, e);
        }
        return;
      }
    }
  }

  /** Waits {@code d} or until {@link #close}, whichever comes first. */
  private void pause(Duration d) {
    long until = System.nanoTime() + d.toNanos();
    long step = settings.pollInterval().toNanos();
    long left;
    while (running && (left = until - System.nanoTime()) > 0) {
      LockSupport.parkNanos(Math.min(left, step));
    }
  }

  /**
   * One run of the subscriber on the context {@link #ctx}: its sockets, then the receive loop until
   * {@link #close}. After a failure the sequencer is kept: batches published while the subscriber
   * was down are a gap before the next live one (or found by the silence audit), which the replay
   * fills as any other gap.
   */
  private void listen() {
    subscribe(ctx);
    if (replay != null) {
      replay.open(ctx);
    }
    if (sequencer == null) {
      sequencer =
          new StreamSequencer(
              delivery, replay, threadName, settings, System::nanoTime, listener::onRestart);
    }
    long silenceNanos = settings.silence().toNanos();
    long lastLive = System.nanoTime();
    while (running) {
      runCommands();
      if (dropped()) {
        resubscribe(ctx);
      }
      if (replay != null) {
        replay.replaceIfDropped(); // reconnects by itself as soon as the engine listens again
      }
      ZMsg msg = ZMsg.recvMsg(sub);
      if (msg == null) {
        sequencer.onIdle();
        if (System.nanoTime() - lastLive > silenceNanos) {
          long recovered = sequencer.audit();
          if (replay == null || recovered > 0) {
            if (recovered > 0) {
              log.warn(
                  "{}: SUB stuck ({} batches recovered by replay); reconnecting",
                  threadName,
                  recovered);
            }
            resubscribe(ctx);
            reconnects.incrementAndGet();
          }
          lastLive = System.nanoTime();
        }
        settle();
        continue;
      }
      if (dropped()) {
        resubscribe(ctx); // the message may be the old connection's last: replay decides
        continue;
      }
      lastLive = System.nanoTime();
      received.incrementAndGet();
      TransportFrames.Message m = TransportFrames.live(ReplayClient.frames(msg));
      if (m == null || m.endOfReplay()) {
        malformed.incrementAndGet();
        continue;
      }
      sequencer.onLive(m.seq(), m.payload());
      settle();
    }
  }

  private void runCommands() {
    Runnable c;
    while ((c = inbox.poll()) != null) {
      c.run();
    }
    settle();
  }

  private void settle() {
    if (lastHealthyTick > settledTick && !sequencer.interrupted()) {
      settledTick = lastHealthyTick;
      listener.onSettled(settledTick);
    }
  }

  /**
   * Reads the SUB's monitor; on a dropped connection tells the sequencer and returns true: the
   * caller then replaces the SUB, whose queue may still hold the old connection's last messages
   * (they are in the engine's replay buffer if it is the same process, and stale if not).
   */
  private boolean dropped() {
    boolean dropped = false;
    ZMQ.Event event;
    while ((event = ZMQ.Event.recv(monitor, ZMQ.DONTWAIT)) != null) {
      if (event.getEvent() == ZMQ.EVENT_DISCONNECTED) {
        sequencer.onDisconnected();
        dropped = true;
      }
    }
    return dropped;
  }

  /**
   * Connects a SUB socket and a monitor receiving its disconnect events (an engine restart drops
   * the connection).
   */
  private void subscribe(ZContext ctx) {
    sub = ctx.createSocket(SocketType.SUB);
    sub.setLinger(0);
    sub.setRcvHWM(settings.receiveHighWaterMark());
    sub.setReceiveTimeOut((int) settings.pollInterval().toMillis());
    sub.subscribe(topicFilter.getBytes(StandardCharsets.UTF_8));
    String address = "inproc://kv-events-monitor-" + threadName + "-" + MONITORS.incrementAndGet();
    sub.monitor(address, ZMQ.EVENT_DISCONNECTED);
    monitor = ctx.createSocket(SocketType.PAIR);
    monitor.setLinger(0);
    monitor.connect(address);
    sub.connect(endpoint);
  }

  /** Replaces the SUB and its monitor, dropping whatever the old SUB still queued. */
  private void resubscribe(ZContext ctx) {
    ctx.destroySocket(monitor);
    ctx.destroySocket(sub);
    subscribe(ctx);
  }

  @Override
  public void close() {
    running = false;
    if (thread != null) {
      try {
        thread.join(
            settings.replayTimeout().plus(settings.pollInterval()).multipliedBy(2).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
