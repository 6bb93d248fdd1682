package io.kvrouter.systemtest.engine;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The test engine's KV-event publisher, written with msgpack-core and JeroMQ directly from vLLM's
 * wire format (vllm/distributed/kv_events.py, {@code ZmqEventPublisher}; tests/distributed/
 * test_events.py for the replay layout with a topic frame):
 *
 * <ul>
 *   <li>one publisher thread owns both sockets: it serves waiting replay requests, then publishes
 *       the next queued batch as {@code [topic, seq 8 bytes big-endian, msgpack batch]}, seq from 0
 *       per process, and keeps {@code (seq, payload bytes)} in a bounded buffer;
 *   <li>a batch is {@code [ts float64, [events], dp_rank]}; a BlockStored is {@code ["BlockStored",
 *       hashes, parent, token_ids, block_size, lora_id, medium, lora_name]} (positional, as before
 *       vLLM PR #42892) or the map form {@code {"type": "BlockStored", ...}}; hashes at or above
 *       2^63 go out as msgpack uint64;
 *   <li>the replay ROUTER takes {@code [id, "", start seq]} and answers every buffered batch from
 *       that seq as {@code [id, "", topic, seq, payload]}, then {@code [id, "", "", -1, ""]};
 *       replies to a peer that has gone are dropped (ROUTER default);
 *   <li>{@link #dropNextLive} loses batches on the live path only; {@link #answerLate} delays the
 *       answers to the next replay requests, as a busy or returning engine does.
 * </ul>
 */
final class KvWire implements AutoCloseable {

  /** One event of a batch. */
  sealed interface Event permits Stored, Removed {}

  record Stored(long[] hashes, Long parent, int[] tokens, int blockSize) implements Event {}

  record Removed(long[] hashes) implements Event {}

  private record Pending(byte[] client, long from, long dueNanos) {}

  /** What survives an outage of the same process: its sequence and replay buffer. */
  record State(long nextSeq, List<long[]> seqs, List<byte[]> payloads) {}

  private final ZContext ctx = new ZContext();
  private final ZMQ.Socket pub;
  private final ZMQ.Socket router;
  private final String pubEndpoint;
  private final String replayEndpoint;
  private final byte[] topic;
  private final boolean mapEvents;
  private final int bufferSteps;
  private final LinkedBlockingQueue<List<Event>> queue = new LinkedBlockingQueue<>();
  private final ArrayDeque<long[]> bufferSeqs = new ArrayDeque<>();
  private final ArrayDeque<byte[]> bufferPayloads = new ArrayDeque<>();
  private final List<Pending> pending = new ArrayList<>();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile int dropLive;
  private volatile int lateAnswers;
  private volatile long lateNanos;
  private volatile long replayRequests;
  private long nextSeq;

  /**
   * Binds both sockets (port 0 in an endpoint picks a free one; a restarted engine passes the ports
   * it had).
   *
   * @param survived the state of the same process before an outage, or null for a new process
   */
  KvWire(
      String pubBind,
      String replayBind,
      String topic,
      boolean mapEvents,
      int bufferSteps,
      State survived) {
    if (survived != null) {
      nextSeq = survived.nextSeq();
      survived.seqs().forEach(bufferSeqs::addLast);
      survived.payloads().forEach(bufferPayloads::addLast);
    }
    this.topic = topic.getBytes(StandardCharsets.UTF_8);
    this.mapEvents = mapEvents;
    this.bufferSteps = bufferSteps;
    pub = ctx.createSocket(SocketType.PUB);
    pub.setLinger(0);
    pubEndpoint = bind(pub, pubBind);
    router = ctx.createSocket(SocketType.ROUTER);
    router.setLinger(0);
    replayEndpoint = bind(router, replayBind);
    thread = new Thread(this::run, "test-engine-kv-wire");
    thread.setDaemon(true);
    thread.start();
  }

  private static String bind(ZMQ.Socket s, String endpoint) {
    if (endpoint.endsWith(":0")) {
      int port = s.bindToRandomPort(endpoint.substring(0, endpoint.length() - 2));
      return endpoint.substring(0, endpoint.length() - 1) + port;
    }
    s.bind(endpoint);
    return endpoint;
  }

  String pubEndpoint() {
    return pubEndpoint;
  }

  String replayEndpoint() {
    return replayEndpoint;
  }

  /** Queues one batch (published in order by the wire's thread). */
  void publish(List<Event> events) {
    queue.add(events);
  }

  void dropNextLive(int n) {
    dropLive = n;
  }

  /** The next {@code n} replay requests are answered {@code millis} after they arrive. */
  void answerLate(int n, long millis) {
    lateNanos = millis * 1_000_000;
    lateAnswers = n;
  }

  long replayRequests() {
    return replayRequests;
  }

  /** True once every queued batch went out. */
  boolean drained() {
    return queue.isEmpty();
  }

  private void run() {
    ZMQ.Poller poller = ctx.createPoller(1);
    poller.register(router, ZMQ.Poller.POLLIN);
    try {
      while (running) {
        while (poller.poll(0) > 0 && poller.pollin(0)) {
          takeRequest();
        }
        answerDue();
        List<Event> batch = queue.poll(5, TimeUnit.MILLISECONDS);
        if (batch != null) {
          send(batch);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      if (running) {
        throw e;
      }
    } finally {
      poller.close();
    }
  }

  private void takeRequest() {
    ZMsg req = ZMsg.recvMsg(router, ZMQ.DONTWAIT);
    if (req == null || req.size() != 3) {
      return;
    }
    replayRequests++;
    byte[] client = req.pop().getData();
    req.pop();
    long from = ByteBuffer.wrap(req.pop().getData()).getLong();
    long due = System.nanoTime();
    if (lateAnswers > 0) {
      lateAnswers--;
      due += lateNanos;
    }
    pending.add(new Pending(client, from, due));
  }

  private void answerDue() {
    long now = System.nanoTime();
    for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (now - p.dueNanos() < 0) {
        continue;
      }
      it.remove();
      Iterator<byte[]> payloads = bufferPayloads.iterator();
      for (long[] seq : bufferSeqs) {
        byte[] payload = payloads.next();
        if (seq[0] >= p.from()) {
          reply(p.client(), seq[0], payload);
        }
      }
      reply(p.client(), -1, null);
    }
  }

  private void reply(byte[] client, long seq, byte[] payload) {
    router.sendMore(client);
    router.sendMore(new byte[0]);
    router.sendMore(payload == null ? new byte[0] : topic);
    router.sendMore(seq8(seq));
    router.send(payload == null ? new byte[0] : payload);
  }

  private void send(List<Event> events) {
    long seq = nextSeq++;
    byte[] payload = encode(events);
    if (dropLive > 0) {
      dropLive--;
    } else {
      pub.sendMore(topic);
      pub.sendMore(seq8(seq));
      pub.send(payload);
    }
    bufferSeqs.addLast(new long[] {seq});
    bufferPayloads.addLast(payload);
    if (bufferSeqs.size() > bufferSteps) {
      bufferSeqs.removeFirst();
      bufferPayloads.removeFirst();
    }
  }

  private static byte[] seq8(long seq) {
    return ByteBuffer.allocate(8).putLong(seq).array();
  }

  private byte[] encode(List<Event> events) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packArrayHeader(3);
      p.packDouble(System.currentTimeMillis() / 1000.0);
      p.packArrayHeader(events.size());
      for (Event e : events) {
        if (e instanceof Stored s) {
          stored(p, s);
        } else if (e instanceof Removed r) {
          removed(p, r);
        }
      }
      p.packInt(0);
      return p.toByteArray();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private void stored(MessageBufferPacker p, Stored s) throws IOException {
    if (mapEvents) {
      p.packMapHeader(8);
      p.packString("type").packString("BlockStored");
      p.packString("block_hashes");
      hashes(p, s.hashes());
      p.packString("parent_block_hash");
      nullableHash(p, s.parent());
      p.packString("token_ids");
      ints(p, s.tokens());
      p.packString("block_size").packInt(s.blockSize());
      p.packString("lora_id").packNil();
      p.packString("medium").packString("GPU");
      p.packString("lora_name").packNil();
    } else {
      p.packArrayHeader(8);
      p.packString("BlockStored");
      hashes(p, s.hashes());
      nullableHash(p, s.parent());
      ints(p, s.tokens());
      p.packInt(s.blockSize());
      p.packNil();
      p.packString("GPU");
      p.packNil();
    }
  }

  private void removed(MessageBufferPacker p, Removed r) throws IOException {
    if (mapEvents) {
      p.packMapHeader(3);
      p.packString("type").packString("BlockRemoved");
      p.packString("block_hashes");
      hashes(p, r.hashes());
      p.packString("medium").packString("GPU");
    } else {
      p.packArrayHeader(3);
      p.packString("BlockRemoved");
      hashes(p, r.hashes());
      p.packString("GPU");
    }
  }

  private static void hashes(MessageBufferPacker p, long[] hashes) throws IOException {
    p.packArrayHeader(hashes.length);
    for (long h : hashes) {
      hash(p, h);
    }
  }

  private static void nullableHash(MessageBufferPacker p, Long h) throws IOException {
    if (h == null) {
      p.packNil();
    } else {
      hash(p, h);
    }
  }

  private static void hash(MessageBufferPacker p, long h) throws IOException {
    if (h < 0) {
      p.packBigInteger(new BigInteger(Long.toUnsignedString(h))); // uint64, as Python packs it
    } else {
      p.packLong(h);
    }
  }

  private static void ints(MessageBufferPacker p, int[] values) throws IOException {
    p.packArrayHeader(values.length);
    for (int v : values) {
      p.packInt(v);
    }
  }

  /** The sequence and replay buffer (call after {@link #close}). */
  State state() {
    return new State(nextSeq, new ArrayList<>(bufferSeqs), new ArrayList<>(bufferPayloads));
  }

  /** Closes both sockets at once, as a dying process does; queued batches are lost. */
  @Override
  public void close() {
    running = false;
    try {
      thread.join(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ctx.close();
  }
}
