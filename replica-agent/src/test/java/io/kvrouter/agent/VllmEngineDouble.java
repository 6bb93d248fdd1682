package io.kvrouter.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.engine.ZmqFrames;
import io.kvrouter.testing.EngineDoubles;
import io.kvrouter.testing.ZmqRebind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * A vLLM engine as the agent meets it, written from vLLM's behaviour and not from kvrouter's
 * simulated engine, for the engine-fault tests: one front-end ({@code /health}, {@code /metrics},
 * {@code /v1/completions} routed to a rank by {@code X-data-parallel-rank}) over {@code ranks}
 * data-parallel ranks, each with its own prefix cache and its own ZMQ PUB socket
 * (vllm/distributed/kv_events.py, {@code ZmqEventPublisher}: frames topic, seq 8 bytes big-endian
 * from 0 per process, msgpack {@code [ts, [events], dp_rank]}; events positional, {@code
 * ["BlockStored", hashes, parent, token_ids, block_size, lora_id, medium, lora_name]}, {@code
 * ["AllBlocksCleared"]}). A replay socket per rank only when asked for (vLLM has none by default):
 * a ROUTER answering {@code [id, "", start_seq8]} with {@code [id, "", seq8, payload]} for each
 * batch of the rank's buffer from {@code start_seq} on, then {@code [id, "", END, ""]}
 * (docs/kv-events.md, section 1), served by a thread of its own.
 *
 * <p>What matters for the faults, as vLLM does it:
 *
 * <ul>
 *   <li>events are queued by the block pool and published only when the scheduler runs a step
 *       ({@code Scheduler.update_from_output} takes the queue and publishes one batch if it is not
 *       empty); an idle engine runs no step, so {@link #resetPrefixCache} (vLLM's {@code POST
 *       /reset_prefix_cache}, which only succeeds while no request runs) queues {@code
 *       AllBlocksCleared} and publishes nothing until the next request;
 *   <li>{@link #restart} is a new process that says nothing: sockets closed and bound again on the
 *       same ports, sequence from 0, empty caches, a new hash seed, new start time and counters;
 *   <li>{@link #stopRank} loses one rank's engine core: its sockets (PUB and replay) are gone, its
 *       requests fail, the front-end and the other ranks keep serving.
 * </ul>
 *
 * <p>Block hashes: SHA-256 chained over the parent's digest and the block's tokens, seeded per
 * process, published as the digest's last 8 bytes (vLLM's int form). Text prompts are tokenized as
 * UTF-8 bytes + 3. Thread-safe.
 */
final class VllmEngineDouble implements AutoCloseable {

  private static final String HOST = "127.0.0.1";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final int blockSize;
  private final boolean exportStartTime;
  private final boolean withReplay;
  private final ZContext ctx = new ZContext();
  private final Rank[] ranks;
  private final HttpServer http;
  private final ExecutorService httpThreads = Executors.newFixedThreadPool(2);
  private double startTime;

  /** One data-parallel rank: its engine core's cache and publisher. */
  private final class Rank {
    final int index;
    final int port;
    ZMQ.Socket pub;
    final Replay replay;
    final List<byte[]> buffer = new ArrayList<>(); // the payloads published, by seq
    long seq;
    byte[] seed;
    final Map<String, byte[]> cache = new HashMap<>(); // token prefix -> block digest
    final List<byte[]> queued = new ArrayList<>(); // packed events awaiting the next step
    long queries;
    long hits;

    Rank(int index) {
      this.index = index;
      this.pub = ctx.createSocket(SocketType.PUB);
      pub.setLinger(0);
      this.port = pub.bindToRandomPort("tcp://" + HOST);
      this.replay = withReplay ? new Replay(this) : null;
      newProcess();
    }

    void newProcess() {
      seq = 0;
      buffer.clear();
      seed = new byte[32];
      ThreadLocalRandom.current().nextBytes(seed);
      cache.clear();
      queued.clear();
      queries = 0;
      hits = 0;
    }

    boolean gone() {
      return pub == null;
    }
  }

  /**
   * A rank's replay ROUTER and the thread that owns it. It stays bound across {@link #restart} (a
   * restart faster than anything notices; the answers come from the new process's buffer) and
   * closes with {@link #stopRank}.
   */
  private final class Replay {
    final Rank rank;
    final ZMQ.Socket router;
    final int port;
    final Thread thread;
    volatile boolean stopped;

    Replay(Rank rank) {
      this.rank = rank;
      router = ctx.createSocket(SocketType.ROUTER);
      router.setLinger(0);
      router.setReceiveTimeOut(20);
      port = router.bindToRandomPort("tcp://" + HOST);
      thread = new Thread(this::serve, "vllm-double-replay-" + rank.index);
      thread.setDaemon(true);
      thread.start();
    }

    private void serve() {
      while (!stopped) {
        ZMsg req = ZMsg.recvMsg(router);
        if (req != null && req.size() == 3) {
          byte[] id = req.pop().getData();
          req.pop();
          answer(id, ZmqFrames.seq(req.pop().getData()));
        }
      }
      ctx.destroySocket(router);
    }

    private void answer(byte[] id, long start) {
      List<byte[]> batches;
      synchronized (VllmEngineDouble.this) {
        batches = new ArrayList<>(rank.buffer);
      }
      for (int s = (int) Math.max(start, 0); s < batches.size(); s++) {
        router.sendMore(id);
        router.sendMore(new byte[0]);
        router.sendMore(ZmqFrames.seq(s));
        router.send(batches.get(s));
      }
      router.sendMore(id);
      router.sendMore(new byte[0]);
      router.sendMore(ZmqFrames.seq(ZmqFrames.END_OF_REPLAY));
      router.send(new byte[0]);
    }

    void stop() {
      stopped = true;
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * @param ranks data-parallel ranks (1 for an engine without data parallelism)
   * @param blockSize tokens per block
   * @param exportStartTime whether /metrics has {@code process_start_time_seconds} (Python's
   *     prometheus_client exports it, except in multiprocess mode)
   */
  VllmEngineDouble(int ranks, int blockSize, boolean exportStartTime) throws IOException {
    this(ranks, blockSize, exportStartTime, false);
  }

  /**
   * @param withReplay each rank binds a replay socket (vLLM's {@code replay_endpoint})
   */
  VllmEngineDouble(int ranks, int blockSize, boolean exportStartTime, boolean withReplay)
      throws IOException {
    this.blockSize = blockSize;
    this.exportStartTime = exportStartTime;
    this.withReplay = withReplay;
    this.startTime = System.currentTimeMillis() / 1000.0;
    this.ranks = new Rank[ranks];
    for (int r = 0; r < ranks; r++) {
      this.ranks[r] = new Rank(r);
    }
    http = HttpServer.create(new InetSocketAddress(HOST, 0), 16);
    http.setExecutor(httpThreads);
    http.createContext("/", this::handle);
    http.start();
  }

  String baseUrl() {
    return "http://" + HOST + ":" + http.getAddress().getPort();
  }

  /** Rank {@code r}'s PUB endpoint. */
  String kvEventsEndpoint(int r) {
    return "tcp://" + HOST + ":" + ranks[r].port;
  }

  /** Rank {@code r}'s replay endpoint, or null without one. */
  String replayEndpoint(int r) {
    return withReplay ? "tcp://" + HOST + ":" + ranks[r].replay.port : null;
  }

  /**
   * Replica {@code replicaId} for rank {@code rank} of this engine, model {@code m}, with the
   * rank's replay endpoint if the engine has them.
   */
  ReplicaSpec spec(String replicaId, int rank) {
    return new ReplicaSpec(
        replicaId,
        rank,
        "m",
        baseUrl(),
        blockSize,
        kvEventsEndpoint(rank),
        replayEndpoint(rank),
        "",
        ReplicaInfo.BOTH,
        ranks.length);
  }

  /**
   * Serves one completion of {@code prompt} on rank {@code rank}: one scheduler step, which
   * publishes what the cache queued (earlier events first, then this request's new blocks).
   *
   * @return the prompt tokens the rank had cached
   */
  synchronized int complete(int rank, int[] prompt) {
    Rank r = ranks[rank];
    if (r.gone()) {
      throw new IllegalStateException("rank " + rank + " is gone");
    }
    List<byte[]> digests = new ArrayList<>();
    byte[] parent = r.seed;
    int cached = 0;
    int firstNew = -1;
    for (int b = 0; (b + 1) * blockSize <= prompt.length; b++) {
      String prefix = Arrays.toString(Arrays.copyOf(prompt, (b + 1) * blockSize));
      byte[] d = r.cache.get(prefix);
      if (d == null) {
        d = digest(parent, Arrays.copyOfRange(prompt, b * blockSize, (b + 1) * blockSize));
        r.cache.put(prefix, d);
        firstNew = firstNew < 0 ? b : firstNew;
      } else if (firstNew < 0) {
        cached += blockSize;
      }
      digests.add(d);
      parent = d;
    }
    if (firstNew >= 0) {
      r.queued.add(
          stored(
              digests.subList(firstNew, digests.size()),
              firstNew == 0 ? null : digests.get(firstNew - 1),
              Arrays.copyOfRange(prompt, firstNew * blockSize, digests.size() * blockSize)));
    }
    r.queries += prompt.length;
    r.hits += cached;
    step(r);
    return cached;
  }

  /**
   * vLLM's {@code POST /reset_prefix_cache} on an idle engine: every rank's cache is emptied and
   * {@code AllBlocksCleared} queued; nothing is published until a request makes a rank step.
   */
  synchronized void resetPrefixCache() {
    for (Rank r : ranks) {
      r.cache.clear();
      r.queued.add(allBlocksCleared());
    }
  }

  /**
   * The whole engine restarts, announcing nothing: every rank's socket is closed and bound again on
   * its port with seq 0, empty cache, new seed; the process has a new start time. The front-end
   * keeps answering (a restart faster than a health interval).
   */
  synchronized void restart() {
    for (Rank r : ranks) {
      ctx.destroySocket(r.pub);
      r.pub = ZmqRebind.pub(ctx, "tcp://" + HOST + ":" + r.port);
      r.newProcess();
    }
    startTime += 1;
  }

  /** Rank {@code rank}'s engine core dies: its sockets close; the other ranks serve on. */
  void stopRank(int rank) {
    Rank r = ranks[rank];
    synchronized (this) {
      ctx.destroySocket(r.pub);
      r.pub = null;
    }
    if (r.replay != null) {
      r.replay.stop(); // outside the lock: the replay thread takes it to read the buffer
    }
  }

  /** A scheduler step: publishes the queued events as one batch, if there are any. */
  private void step(Rank r) {
    if (r.queued.isEmpty()) {
      return;
    }
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packArrayHeader(3);
      p.packDouble(System.currentTimeMillis() / 1000.0);
      p.packArrayHeader(r.queued.size());
      for (byte[] e : r.queued) {
        p.addPayload(e);
      }
      p.packInt(r.index);
      r.queued.clear();
      byte[] payload = p.toByteArray();
      r.buffer.add(payload);
      r.pub.sendMore(new byte[0]);
      r.pub.sendMore(ZmqFrames.seq(r.seq++));
      r.pub.send(payload);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private byte[] stored(List<byte[]> digests, byte[] parent, int[] tokens) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packArrayHeader(8);
      p.packString("BlockStored");
      p.packArrayHeader(digests.size());
      for (byte[] d : digests) {
        packHash(p, d);
      }
      if (parent == null) {
        p.packNil();
      } else {
        packHash(p, parent);
      }
      p.packArrayHeader(tokens.length);
      for (int t : tokens) {
        p.packInt(t);
      }
      p.packInt(blockSize);
      p.packNil(); // lora_id
      p.packString("GPU");
      p.packNil(); // lora_name
      return p.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] allBlocksCleared() {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packArrayHeader(1);
      p.packString("AllBlocksCleared");
      return p.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** vLLM's int form: the digest's last 8 bytes big-endian, unsigned (uint64 from 2^63 up). */
  private static void packHash(MessageBufferPacker p, byte[] digest) throws IOException {
    long v = ByteBuffer.wrap(digest, digest.length - 8, 8).getLong();
    if (v < 0) {
      p.packBigInteger(new BigInteger(Long.toUnsignedString(v)));
    } else {
      p.packLong(v);
    }
  }

  private static byte[] digest(byte[] parent, int[] tokens) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(parent);
      ByteBuffer b = ByteBuffer.allocate(tokens.length * 4);
      for (int t : tokens) {
        b.putInt(t);
      }
      sha.update(b.array());
      return sha.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      switch (ex.getRequestURI().getPath()) {
        case "/health" -> EngineDoubles.respond(ex, 200, "");
        case "/metrics" -> EngineDoubles.respond(ex, 200, metrics());
        case "/v1/completions" -> completion(ex, body);
        default -> EngineDoubles.respond(ex, 404, "{\"error\":{\"message\":\"not found\"}}");
      }
    }
  }

  private void completion(HttpExchange ex, String body) throws IOException {
    String header = ex.getRequestHeaders().getFirst(ReplicaInfo.DP_RANK_HEADER);
    int rank = header == null ? 0 : Integer.parseInt(header.trim());
    JsonNode prompt = JSON.readTree(body).path("prompt");
    int[] tokens = EngineDoubles.tokens(prompt);
    int cached;
    try {
      cached = complete(rank, tokens);
    } catch (IllegalStateException gone) {
      EngineDoubles.respond(ex, 500, "{\"error\":{\"message\":\"EngineDeadError\"}}");
      return;
    }
    EngineDoubles.respond(
        ex,
        200,
        "{\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"x\","
            + "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":"
            + tokens.length
            + ",\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":"
            + cached
            + "}}}");
  }

  private synchronized String metrics() {
    StringBuilder sb = new StringBuilder();
    for (Rank r : ranks) {
      String l = "{model_name=\"m\",engine=\"" + r.index + "\"}";
      sb.append("vllm:num_requests_running").append(l).append(" 0.0\n");
      sb.append("vllm:num_requests_waiting").append(l).append(" 0.0\n");
      sb.append("vllm:kv_cache_usage_perc").append(l).append(" 0.0\n");
      sb.append("vllm:prefix_cache_queries_total").append(l).append(' ').append(r.queries);
      sb.append(".0\nvllm:prefix_cache_hits_total").append(l).append(' ').append(r.hits);
      sb.append(".0\n");
    }
    if (exportStartTime) {
      sb.append(String.format(Locale.ROOT, "process_start_time_seconds %.2f%n", startTime));
    }
    return sb.toString();
  }

  @Override
  public void close() {
    http.stop(0);
    httpThreads.shutdownNow();
    for (Rank r : ranks) {
      if (r.replay != null) {
        r.replay.stop();
      }
    }
    synchronized (this) {
      ctx.close();
    }
  }
}
