package io.kvrouter.agent.kvevents;

import io.kvrouter.protocol.engine.ZmqFrames;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The replay client of one {@link KvEventSubscriber}: a DEALER to the engine's replay ROUTER, which
 * sends {@code ["", seq8]} and reads until the end marker. It owns its sockets (opened on each
 * run's context by {@link #open}) and counts the requests it sends and the replies it could not
 * parse. Runs entirely on the subscriber's thread, like everything the subscriber does; only the
 * counters are read from elsewhere.
 *
 * <p>vLLM's replay protocol has no request id, so an answer is matched to its request by reading it
 * whole: when it is not whole within {@code replayTimeout} (or the connection drops), the DEALER is
 * closed and the next request gets a new one. An answer that comes later goes to a socket that no
 * longer exists, and vLLM's ROUTER drops replies to unknown peers, so it can never be read as the
 * answer to a later request (a DEALER kept across a timeout would send a request queued while the
 * engine was away once it is back, and from then on read each reply one request late). While
 * answers come whole the DEALER is kept: a request on a connection made moments before was
 * sometimes lost (JeroMQ 0.6.0 on loopback, about one in three hundred), so the DEALER is replaced
 * as soon as its connection drops and the first request on a new one is sent again when nothing at
 * all came back after {@code replayRetry}.
 */
final class ReplayClient implements StreamSequencer.ReplaySource {

  private static final AtomicLong MONITORS = new AtomicLong();

  /** Safety bound on one replay answer (vLLM buffers 10,000 batches by default). */
  private static final int MAX_REPLAY_MESSAGES = 1_000_000;

  private final String endpoint;
  private final String threadName;
  private final SubscriberSettings settings;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong malformed = new AtomicLong();
  private ZContext ctx;
  private ZMQ.Socket dealer;
  private ZMQ.Socket dealerDrops;
  private ZMQ.Poller dealerPoller;
  private boolean dealerFresh;

  /**
   * @param endpoint the engine's ROUTER replay endpoint
   * @param threadName the subscriber's thread name (names the monitor's address)
   * @param settings the replay's waits
   */
  ReplayClient(String endpoint, String threadName, SubscriberSettings settings) {
    this.endpoint = endpoint;
    this.threadName = threadName;
    this.settings = settings;
  }

  /** Replay requests sent so far. */
  long requests() {
    return requests.get();
  }

  /** Replay replies that could not be parsed. */
  long malformed() {
    return malformed.get();
  }

  /** Opens the DEALER on {@code context} (a run of the subscriber's; its sockets close with it). */
  void open(ZContext context) {
    ctx = context;
    openDealer();
  }

  /**
   * Replaces the DEALER when its connection dropped since it was last looked at (it reconnects by
   * itself as soon as the engine listens again).
   */
  void replaceIfDropped() {
    if (ZMQ.Event.recv(dealerDrops, ZMQ.DONTWAIT) != null) {
      replaceDealer();
    }
  }

  /**
   * The engine's buffer from {@code fromSeq} on, whole, in as many requests as it takes: an answer
   * cut short (a hole, or no end marker before the timeout) is followed by a request for the rest,
   * as long as each brings the next batches. Unanswered when one brings none (the timeout, or the
   * connection dropped: a request already sent on a dead connection is never answered; a
   * reconnected DEALER does not send it again). The DEALER is kept while every answer is whole and
   * replaced after any that is not, so a late answer dies with the socket it was meant for.
   */
  @Override
  public EngineReplay fetch(long fromSeq) {
    List<TransportFrames.Message> got = new ArrayList<>();
    long from = fromSeq;
    while (got.size() < MAX_REPLAY_MESSAGES) {
      EngineReplay part = fetchOnce(from);
      List<TransportFrames.Message> run = leadingRun(part.batches());
      got.addAll(run);
      if (part.complete() && run.size() == part.batches().size()) {
        return EngineReplay.of(got); // whole, without a hole: the engine's buffer from fromSeq on
      }
      if (run.isEmpty()) {
        return EngineReplay.unanswered(); // no progress: asked again later, from the start
      }
      // Cut by the ROUTER's high-water mark or the timeout: ask for the rest.
      from = run.get(run.size() - 1).seq() + 1;
    }
    return EngineReplay.unanswered();
  }

  /**
   * The batches of one answer up to its first hole. An engine's buffer holds consecutive batches,
   * so a hole inside an answer is the transport's: a ZMQ ROUTER drops what exceeds its send
   * high-water mark (1000 messages by default; vLLM's {@code vllm/distributed/kv_events.py} sets
   * its {@code hwm} on the PUB socket only) while the answer is still being written. Only a first
   * batch above the one asked for says the engine no longer holds the ones before it.
   */
  static List<TransportFrames.Message> leadingRun(List<TransportFrames.Message> batches) {
    int n = 1;
    while (n < batches.size() && batches.get(n).seq() == batches.get(n - 1).seq() + 1) {
      n++;
    }
    return batches.isEmpty() ? List.of() : batches.subList(0, n);
  }

  /**
   * One request and its answer: whole (through the end marker), or what arrived before the timeout
   * or the connection's drop, marked not whole.
   */
  private EngineReplay fetchOnce(long fromSeq) {
    requests.incrementAndGet();
    replaceIfDropped(); // its connection dropped since the last answer: start clean
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
          replaceDealer();
        }
        return EngineReplay.of(out);
      } else {
        out.add(m);
      }
    }
    replaceDealer();
    return EngineReplay.partial(out);
  }

  private void send(long fromSeq) {
    dealer.sendMore(new byte[0]);
    dealer.send(ZmqFrames.seq(fromSeq));
  }

  /** A DEALER to the replay endpoint and a monitor of its connection drops. */
  private void openDealer() {
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
    dealer.connect(endpoint);
  }

  /**
   * Closes the DEALER (whatever answer is still on its way dies with it) and connects a new one at
   * once: a request sent on a connection made moments before was sometimes lost (JeroMQ 0.6.0 on
   * loopback), one sent on a settled connection was not.
   */
  private void replaceDealer() {
    dealerPoller.close();
    ctx.destroySocket(dealerDrops);
    ctx.destroySocket(dealer);
    openDealer();
  }

  /** The frames of a received message (live or replay), as bytes. */
  static List<byte[]> frames(ZMsg msg) {
    List<byte[]> out = new ArrayList<>(msg.size());
    msg.forEach(f -> out.add(f.getData()));
    return out;
  }
}
