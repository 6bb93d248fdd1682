package io.kvrouter.agent.kvevents;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * <p>Replay: a DEALER sends {@code ["", seq8]} to the engine's ROUTER and reads until the end
 * marker. vLLM's replay protocol has no request id, so an answer is matched to its request by
 * reading it whole: when it is not whole within {@code replayTimeout} (or the connection drops),
 * the DEALER is closed and the next request gets a new one. An answer that comes later goes to a
 * socket that no longer exists, and vLLM's ROUTER drops replies to unknown peers, so it can never
 * be read as the answer to a later request (a DEALER kept across a timeout would send a request
 * queued while the engine was away once it is back, and from then on read each reply one request
 * late). While answers come whole the DEALER is kept: a request on a connection made moments before
 * was sometimes lost (JeroMQ 0.6.0 on loopback, about one in three hundred), so the DEALER is
 * replaced as soon as its connection drops and the first request on a new one is sent again when
 * nothing at all came back after {@code replayRetry}.
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
public final class KvEventSubscriber implements AutoCloseable {

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

  /** Safety bound on one replay answer (vLLM buffers 10,000 batches by default). */
  private static final int MAX_REPLAY_MESSAGES = 1_000_000;

  private final String endpoint;
  private final String replayEndpoint;
  private final String topicFilter;
  private final EngineStreamHandler handler;
  private final Delivery delivery;
  private final String threadName;
  private final SubscriberSettings settings;
  private final Listener listener;
  private final Queue<Runnable> inbox = new ConcurrentLinkedQueue<>();
  private final AtomicLong received = new AtomicLong();
  private final AtomicLong replayRequests = new AtomicLong();
  private final AtomicLong malformed = new AtomicLong();
  private final AtomicLong reconnects = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private volatile boolean running = true;
  private Thread thread;
  private volatile StreamSequencer sequencer;
  private ZContext ctx;
  private ZMQ.Socket sub;
  private ZMQ.Socket monitor;
  private ZMQ.Socket dealer;
  private ZMQ.Socket dealerDrops;
  private ZMQ.Poller dealerPoller;
  private boolean dealerFresh;
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
    this.replayEndpoint = replayEndpoint;
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
    return replayRequests.get();
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
    return malformed.get() + (s == null ? 0 : s.malformed());
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
    if (replayEndpoint != null) {
      openDealer(ctx);
    }
    if (sequencer == null) {
      sequencer =
          new StreamSequencer(
              delivery,
              replayEndpoint == null ? null : from -> fetchReplay(ctx, from),
              threadName,
              settings,
              System::nanoTime,
              listener::onRestart);
    }
    long silenceNanos = settings.silence().toNanos();
    long lastLive = System.nanoTime();
    while (running) {
      runCommands();
      if (dropped()) {
        resubscribe(ctx);
      }
      if (dealer != null && ZMQ.Event.recv(dealerDrops, ZMQ.DONTWAIT) != null) {
        replaceDealer(ctx); // reconnects by itself as soon as the engine listens again
      }
      ZMsg msg = ZMsg.recvMsg(sub);
      if (msg == null) {
        sequencer.onIdle();
        if (System.nanoTime() - lastLive > silenceNanos) {
          long recovered = sequencer.audit();
          if (replayEndpoint == null || recovered > 0) {
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
      TransportFrames.Message m = TransportFrames.live(frames(msg));
      if (m == null || m.endOfReplay()) {
        malformed.incrementAndGet();
        continue;
      }
      sequencer.onLive(m.seq(), m.payload());
      settle();
    }
  }

  /**
   * The handler, with the seq of the batch it is being given (to report it lost when that fails)
   * and of the last one it took. Subscriber thread only.
   */
  private static final class Delivery implements EngineStreamHandler {
    private final EngineStreamHandler handler;
    private long delivering = -1;
    private long delivered = -1;
    private boolean sinceFailure;

    Delivery(EngineStreamHandler handler) {
      this.handler = handler;
    }

    @Override
    public void onBatch(long seq, EngineEventBatch batch) {
      delivering = seq;
      handler.onBatch(seq, batch);
      delivered = seq;
      delivering = -1;
      sinceFailure = true;
    }

    @Override
    public void onEngineRestart(long lastSeq, long newSeq) {
      delivered = -1;
      handler.onEngineRestart(lastSeq, newSeq);
    }

    @Override
    public void onUnrecoverableGap(long fromSeq, long toSeq) {
      handler.onUnrecoverableGap(fromSeq, toSeq);
    }

    /**
     * A failure happened: the batch it interrupted (the one being handed over, else the one after
     * the last taken, which the decoder may have dropped).
     */
    long failed() {
      long lost = delivering >= 0 ? delivering : delivered + 1;
      delivering = -1;
      return lost;
    }

    /** True when a batch was taken since the last failure (a failure in a row otherwise). */
    boolean deliveredSinceFailure() {
      boolean d = sinceFailure;
      sinceFailure = false;
      return d;
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

  /**
   * One replay request: the whole answer, or unanswered at the timeout or as soon as the connection
   * drops (a request already sent on a dead connection is never answered; a reconnected DEALER does
   * not send it again). The DEALER is kept while every answer is whole and replaced after any that
   * is not, so a late answer dies with the socket it was meant for.
   */
  private ReplayReply fetchReplay(ZContext ctx, long fromSeq) {
    replayRequests.incrementAndGet();
    if (ZMQ.Event.recv(dealerDrops, ZMQ.DONTWAIT) != null) {
      replaceDealer(ctx); // its connection dropped since the last answer: start clean
    }
    send(fromSeq);
    long now = System.nanoTime();
    long deadline = now + settings.replayTimeout().toNanos();
    // The first request on a new connection was sometimes lost (JeroMQ 0.6.0 on loopback): when
    // nothing at all came back after replayRetry it is sent once more, and the socket replaced
    // after the (first) whole answer, so the second answer dies with it.
    long resendAt = dealerFresh ? now + settings.replayRetry().toNanos() : Long.MAX_VALUE;
    boolean resent = false;
    List<TransportFrames.Message> out = new ArrayList<>();
    while (out.size() < MAX_REPLAY_MESSAGES) {
      long wakeAt = !resent && out.isEmpty() ? Math.min(deadline, resendAt) : deadline;
      long left = (wakeAt - System.nanoTime()) / 1_000_000;
      if (left <= 0) {
        if (wakeAt == deadline) {
          break;
        }
        send(fromSeq); // nothing came back at all: once more
        resent = true;
        continue;
      }
      if (dealerPoller.poll(left) < 0) {
        break;
      }
      ZMsg reply = dealerPoller.pollin(0) ? ZMsg.recvMsg(dealer, ZMQ.DONTWAIT) : null;
      if (reply == null) {
        if (dealerPoller.pollin(1)) {
          break; // the connection dropped with the answer incomplete
        }
        continue;
      }
      TransportFrames.Message m = TransportFrames.replay(frames(reply));
      if (m == null) {
        malformed.incrementAndGet();
      } else if (m.endOfReplay()) {
        dealerFresh = false;
        if (resent) {
          replaceDealer(ctx);
        }
        return ReplayReply.of(out);
      } else {
        out.add(m);
      }
    }
    replaceDealer(ctx);
    return ReplayReply.unanswered();
  }

  private void send(long fromSeq) {
    dealer.sendMore(new byte[0]);
    dealer.send(ZmqFrames.seq(fromSeq));
  }

  /** A DEALER to the replay endpoint and a monitor of its connection drops. */
  private void openDealer(ZContext ctx) {
    dealer = ctx.createSocket(SocketType.DEALER);
    dealer.setLinger(0);
    dealerDrops = ctx.createSocket(SocketType.PAIR);
    dealerDrops.setLinger(0);
    String address = "inproc://kv-replay-monitor-" + threadName + "-" + MONITORS.incrementAndGet();
    dealer.monitor(address, ZMQ.EVENT_DISCONNECTED);
    dealerDrops.connect(address);
    dealerPoller = ctx.createPoller(2);
    dealerPoller.register(dealer, ZMQ.Poller.POLLIN);
    dealerPoller.register(dealerDrops, ZMQ.Poller.POLLIN);
    dealerFresh = true;
    dealer.connect(replayEndpoint);
  }

  /**
   * Closes the DEALER (whatever answer is still on its way dies with it) and connects a new one at
   * once: a request sent on a connection made moments before was sometimes lost (JeroMQ 0.6.0 on
   * loopback), one sent on a settled connection was not.
   */
  private void replaceDealer(ZContext ctx) {
    dealerPoller.close();
    ctx.destroySocket(dealerDrops);
    ctx.destroySocket(dealer);
    openDealer(ctx);
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
        thread.join(
            settings.replayTimeout().plus(settings.pollInterval()).multipliedBy(2).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
