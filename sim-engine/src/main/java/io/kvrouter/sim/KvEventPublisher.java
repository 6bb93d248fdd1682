package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEventBatch;
import io.kvrouter.protocol.engine.EventEncoding;
import io.kvrouter.protocol.engine.ReplayLayout;
import io.kvrouter.protocol.engine.ZmqFrames;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZFrame;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The simulated engine's KV-event publisher, speaking vLLM's ZMQ transport (vLLM {@code
 * vllm/distributed/kv_events.py}; see {@code docs/kv-events.md}, section 1):
 *
 * <ul>
 *   <li>a PUB socket sending {@code [topic, seq8, msgpack(batch)]}, seq from 0 per publisher, +1
 *       per batch;
 *   <li>a ROUTER replay socket answering {@code [id, "", start_seq8]} with every buffered batch of
 *       seq ≥ start, then the end marker, in the configured {@link ReplayLayout};
 *   <li>a ring of the last {@code bufferSteps} batches.
 * </ul>
 *
 * Both sockets live on one daemon thread ({@code kv-events-pub}); {@link #publish} only queues.
 * Unlike vLLM, which connects its PUB unless the endpoint contains {@code *}, the sim always binds
 * (it is the server the agent connects to). A port of {@code *} binds an ephemeral port; {@link
 * #pubEndpoint()} tells which.
 */
public final class KvEventPublisher implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KvEventPublisher.class);

  private record Outgoing(long seq, byte[] payload) {}

  private final String pubBind;
  private final String replayBind;
  private final byte[] topic;
  private final VllmEventEncoder encoder;
  private final ReplayLayout layout;
  private final int bufferSteps;
  private final LinkedBlockingQueue<Outgoing> queue = new LinkedBlockingQueue<>();
  private final AtomicInteger dropLive = new AtomicInteger();
  private final CompletableFuture<String[]> bound = new CompletableFuture<>();
  private volatile boolean running = true;
  private long nextSeq;
  private Thread thread;

  /**
   * @param pubEndpoint e.g. {@code tcp://127.0.0.1:5557} or {@code tcp://127.0.0.1:*}
   * @param replayEndpoint ROUTER endpoint, or null for no replay
   * @param topic first frame of every message ("" in vLLM by default)
   * @param encoding how events are encoded
   * @param layout replay reply layout
   * @param bufferSteps batches kept for replay (vLLM default 10,000)
   */
  public KvEventPublisher(
      String pubEndpoint,
      String replayEndpoint,
      String topic,
      EventEncoding encoding,
      ReplayLayout layout,
      int bufferSteps) {
    this.pubBind = pubEndpoint;
    this.replayBind = replayEndpoint;
    this.topic = topic.getBytes(StandardCharsets.UTF_8);
    this.encoder = new VllmEventEncoder(encoding);
    this.layout = layout;
    this.bufferSteps = bufferSteps;
  }

  /** Binds both sockets on the publisher thread; returns when they are bound. */
  public KvEventPublisher start() {
    thread = new Thread(this::run, "kv-events-pub");
    thread.setDaemon(true);
    thread.start();
    try {
      bound.get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      close();
      throw new IllegalStateException(
          "cannot bind KV-event sockets " + pubBind + " / " + replayBind + ": " + e.getMessage(),
          e);
    }
    return this;
  }

  /** The PUB endpoint actually bound. */
  public String pubEndpoint() {
    return bound.join()[0];
  }

  /** The replay endpoint actually bound, or null. */
  public String replayEndpoint() {
    return bound.join()[1];
  }

  /**
   * Queues a batch; assigns and returns its sequence number. Thread-safe, but callers must not
   * publish from two threads at once if they care about order (the engine loop is one thread).
   */
  public synchronized long publish(EngineEventBatch batch) {
    long seq = nextSeq++;
    queue.add(new Outgoing(seq, encoder.encode(batch)));
    return seq;
  }

  /**
   * Test hook: the next {@code n} batches go to the replay ring but not out on PUB, as when the PUB
   * high-water mark drops messages. Subscribers see a sequence gap.
   */
  public void dropNextLive(int n) {
    dropLive.addAndGet(n);
  }

  private void run() {
    ArrayDeque<Outgoing> ring = new ArrayDeque<>();
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket pub = ctx.createSocket(SocketType.PUB);
      pub.setLinger(0);
      pub.setSndHWM(100_000);
      ZMQ.Socket router = null;
      String[] endpoints = new String[2];
      try {
        pub.bind(pubBind);
        endpoints[0] = pub.getLastEndpoint();
        if (replayBind != null) {
          router = ctx.createSocket(SocketType.ROUTER);
          router.setLinger(0);
          router.bind(replayBind);
          endpoints[1] = router.getLastEndpoint();
        }
      } catch (RuntimeException e) {
        bound.completeExceptionally(e);
        return;
      }
      bound.complete(endpoints);
      while (running) {
        Outgoing o = queue.poll(2, TimeUnit.MILLISECONDS);
        while (o != null) {
          ring.addLast(o);
          if (ring.size() > bufferSteps) {
            ring.removeFirst();
          }
          if (dropLive.get() > 0) {
            dropLive.decrementAndGet();
          } else {
            pub.sendMore(topic);
            pub.sendMore(ZmqFrames.seq(o.seq()));
            pub.send(o.payload());
          }
          o = queue.poll();
        }
        if (router != null) {
          for (int guard = 0; guard < 64; guard++) {
            ZMsg req = ZMsg.recvMsg(router, ZMQ.DONTWAIT);
            if (req == null) {
              break;
            }
            answerReplay(router, req, ring);
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      if (running) {
        log.warn("KV-event publisher stopped: {}", e.toString());
      }
    }
  }

  private void answerReplay(ZMQ.Socket router, ZMsg req, ArrayDeque<Outgoing> ring) {
    if (req.size() != 3) {
      log.warn("ignoring replay request of {} frames (expected [id, \"\", seq8])", req.size());
      return;
    }
    ZFrame id = req.pop();
    req.pop();
    long start;
    try {
      start = ZmqFrames.seq(req.pop().getData());
    } catch (IllegalArgumentException e) {
      log.warn("ignoring replay request: {}", e.getMessage());
      return;
    }
    for (Outgoing o : ring) {
      if (o.seq() >= start) {
        router.sendMore(id.getData());
        router.sendMore(new byte[0]);
        if (layout == ReplayLayout.WITH_TOPIC) {
          router.sendMore(topic);
        }
        router.sendMore(ZmqFrames.seq(o.seq()));
        router.send(o.payload());
      }
    }
    router.sendMore(id.getData());
    router.sendMore(new byte[0]);
    if (layout == ReplayLayout.WITH_TOPIC) {
      router.sendMore(new byte[0]);
    }
    router.sendMore(ZmqFrames.seq(ZmqFrames.END_OF_REPLAY));
    router.send(new byte[0]);
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
