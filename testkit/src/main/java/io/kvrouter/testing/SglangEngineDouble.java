package io.kvrouter.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvrouter.protocol.engine.ZmqFrames;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * An SGLang server as the agent meets it, written from SGLang's source (sgl-project/sglang) and not
 * from kvrouter's simulated engine or the other engine doubles:
 *
 * <ul>
 *   <li><b>Cache.</b> Per attention data-parallel rank one radix tree of token pages ({@code
 *       python/sglang/srt/mem_cache/radix_cache.py} at {@code 95769b28}: {@code _insert_helper},
 *       {@code _match_prefix_helper}, {@code _split_node}, {@code evict}), page-aligned: a node
 *       holds a run of whole pages; matching a prefix that ends inside a node splits it, and a
 *       split announces {@code BlockRemoved} of the child's pages, then {@code BlockStored} of the
 *       new parent's and of the child's; eviction removes least recently used leaves.
 *   <li><b>Hashes.</b> Per page {@code get_hash_str}: SHA-256 over the previous page's digest (none
 *       for a node under the root) and the page's tokens as u32 little-endian ({@code
 *       python/sglang/srt/mem_cache/hicache_storage.py} at {@code bb424de2}); on the wire {@code
 *       hash_str_to_int64}: the hex digest's first 16 characters as a signed 64-bit integer. No
 *       seed: the same tokens hash the same in every process.
 *   <li><b>Events.</b> One {@code BlockStored} per page ({@code
 *       python/sglang/srt/mem_cache/events.py} at {@code cc6971b7}, {@code KVCacheEventMixin}):
 *       {@code ["BlockStored", [hash], parent, tokens, page_size, nil, "GPU"]}, parent nil for a
 *       node under the root; {@code ["BlockRemoved", [hash], "GPU"]}; {@code ["AllBlocksCleared"]}
 *       queued by {@code reset()}, which the cache's constructor calls, so each process's first
 *       batch starts with it.
 *   <li><b>Publishing.</b> The scheduler takes the queue after a prefill batch ({@code
 *       _publish_kv_events}, called from the prefill stats) and publishes {@code KVEventBatch(ts,
 *       events)} if it is not empty; {@code ZmqEventPublisher} ({@code
 *       python/sglang/srt/disaggregation/kv_events.py} at {@code 612d579}) fills {@code
 *       attn_dp_rank}, sends {@code [topic, seq 8 bytes big-endian, msgpack [ts, events,
 *       attn_dp_rank]]} with seq from 0 per process, keeps {@code buffer_steps} payloads, and binds
 *       rank {@code r}'s PUB and replay ROUTER at the configured ports plus {@code r} ({@code
 *       offset_endpoint_port}). Replay: {@code [id, "", start_seq]} answered with {@code [id, "",
 *       seq, payload]} per buffered batch from {@code start_seq}, then {@code [id, "", -1, ""]}.
 *   <li><b>HTTP</b> ({@code python/sglang/srt/entrypoints/http_server.py} at {@code 9c0549b7}):
 *       {@code /health}, {@code /get_model_info}, {@code /get_server_info} (server args with {@code
 *       page_size}, {@code dp_size}, {@code kv_events_config}, and {@code version}), {@code
 *       /generate}, {@code /v1/completions}, {@code /v1/chat/completions}, {@code /metrics} with
 *       {@code sglang:*} gauges and no process start time (SGLang runs prometheus_client in
 *       multiprocess mode). A request names its rank in the {@code X-Data-Parallel-Rank} header
 *       (OpenAI routes) or the body's {@code routed_dp_rank}/{@code data_parallel_rank}; without
 *       them the data-parallel controller takes ranks round robin.
 *   <li>{@link #restart} is a new process that says nothing until its first prefill: sockets bound
 *       again on the same ports, seq from 0, empty trees.
 * </ul>
 *
 * <p>Text is tokenized as in the other doubles ({@link EngineDoubles#tokens}); chat messages'
 * contents are joined with a newline. Thread-safe.
 */
public final class SglangEngineDouble implements AutoCloseable {

  /** The version it answers as: one whose OpenAI routes read the rank header (sglang #38729). */
  public static final String VERSION = "0.5.19";

  private static final String HOST = "127.0.0.1";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int BUFFER_STEPS = 10_000;

  private final int pageSize;
  private final int capacityPages;
  private final ZContext ctx = new ZContext();
  private final int pubBase;
  private final int replayBase;
  private final Rank[] ranks;
  private final HttpServer http;
  private final ExecutorService httpThreads = Executors.newFixedThreadPool(2);
  private int roundRobin;

  /** A radix-tree node: whole pages of tokens and each page's hex digest. */
  private static final class Node {
    final Map<List<Integer>, Node> children = new HashMap<>();
    Node parent;
    int[] key = new int[0];
    List<String> hashes = new ArrayList<>();
    long lastAccess;
  }

  /** One attention data-parallel rank: its scheduler's radix cache and its publisher. */
  private final class Rank {
    final int index;
    ZMQ.Socket pub;
    final ZMQ.Socket router;
    final Thread replayThread;
    volatile boolean stopped;
    final ArrayDeque<byte[]> buffer = new ArrayDeque<>(); // payloads, oldest first
    long firstBuffered;
    long seq;
    Node root;
    final List<byte[]> queued = new ArrayList<>();
    int dropNext;
    long clock;

    Rank(int index) {
      this.index = index;
      this.pub = bind(SocketType.PUB, pubBase + index);
      this.router = bind(SocketType.ROUTER, replayBase + index);
      router.setReceiveTimeOut(20);
      newProcess();
      replayThread = new Thread(this::serveReplay, "sglang-double-replay-" + index);
      replayThread.setDaemon(true);
      replayThread.start();
    }

    void newProcess() {
      seq = 0;
      buffer.clear();
      firstBuffered = 0;
      queued.clear();
      root = new Node();
      queued.add(allBlocksCleared()); // RadixCache.__init__ -> reset() -> AllBlocksCleared
    }

    private void serveReplay() {
      while (!stopped) {
        ZMsg req = ZMsg.recvMsg(router);
        if (req == null || req.size() != 3) {
          continue; // SGLang logs "Invalid replay request" and ignores it
        }
        byte[] id = req.pop().getData();
        req.pop();
        long start = ZmqFrames.seq(req.pop().getData());
        List<byte[]> batches;
        long first;
        synchronized (SglangEngineDouble.this) {
          batches = new ArrayList<>(buffer);
          first = firstBuffered;
        }
        for (int i = 0; i < batches.size(); i++) {
          if (first + i >= start) {
            router.sendMore(id);
            router.sendMore(new byte[0]);
            router.sendMore(ZmqFrames.seq(first + i));
            router.send(batches.get(i));
          }
        }
        router.sendMore(id);
        router.sendMore(new byte[0]);
        router.sendMore(ZmqFrames.seq(ZmqFrames.END_OF_REPLAY));
        router.send(new byte[0]);
      }
      ctx.destroySocket(router);
    }
  }

  /**
   * @param dpSize attention data-parallel ranks (1 without data parallelism)
   * @param pageSize tokens per page ({@code --page-size})
   * @param capacityPages pages each rank's cache holds before it evicts
   */
  public SglangEngineDouble(int dpSize, int pageSize, int capacityPages) throws IOException {
    this.pageSize = pageSize;
    this.capacityPages = capacityPages;
    this.pubBase = FreePorts.run(HOST, dpSize);
    this.replayBase = FreePorts.run(HOST, dpSize);
    this.ranks = new Rank[dpSize];
    for (int r = 0; r < dpSize; r++) {
      ranks[r] = new Rank(r);
    }
    http = HttpServer.create(new InetSocketAddress(HOST, 0), 16);
    http.setExecutor(httpThreads);
    http.createContext("/", this::handle);
    http.start();
  }

  public String baseUrl() {
    return "http://" + HOST + ":" + http.getAddress().getPort();
  }

  /** Rank 0's KV event PUB endpoint, as in {@code --kv-events-config}; rank r binds port + r. */
  public String kvEventsEndpoint() {
    return "tcp://" + HOST + ":" + pubBase;
  }

  /** Rank 0's replay ROUTER endpoint; rank r binds port + r. */
  public String replayEndpoint() {
    return "tcp://" + HOST + ":" + replayBase;
  }

  /** Tokens per page ({@code --page-size}). */
  public int pageSize() {
    return pageSize;
  }

  /** Attention data-parallel ranks ({@code --dp-size}). */
  public int dpSize() {
    return ranks.length;
  }

  /**
   * Serves a request of {@code prompt} on {@code rank}: match (which may split a node), evict to
   * make room, insert the prompt's whole pages, and the prefill step's publish.
   *
   * @return the prompt tokens the rank had cached
   */
  public synchronized int generate(int rank, int[] prompt) {
    Rank r = ranks[rank];
    int aligned = prompt.length / pageSize * pageSize;
    int[] key = Arrays.copyOf(prompt, aligned);
    int cached = matchPrefix(r, key);
    int needed = (aligned - cached) / pageSize;
    evict(r, size(r.root) + needed - capacityPages, key);
    insert(r, key);
    publish(r);
    return cached;
  }

  /** The next {@code n} batches of {@code rank} are buffered but lost on the PUB (its HWM). */
  public synchronized void dropNext(int rank, int n) {
    ranks[rank].dropNext = n;
  }

  /** The engine restarts: sockets bound again on the same ports, seq 0, empty trees. */
  public synchronized void restart() {
    for (Rank r : ranks) {
      ctx.destroySocket(r.pub);
      r.pub = ZmqRebind.pub(ctx, "tcp://" + HOST + ":" + (pubBase + r.index));
      r.newProcess();
    }
  }

  /** The engine hashes ({@code hash_str_to_int64}) of every page {@code rank}'s cache holds. */
  public synchronized Set<Long> blockSet(int rank) {
    Set<Long> out = new HashSet<>();
    List<Node> stack = new ArrayList<>(List.of(ranks[rank].root));
    while (!stack.isEmpty()) {
      Node n = stack.remove(stack.size() - 1);
      for (String h : n.hashes) {
        out.add(toInt64(h));
      }
      stack.addAll(n.children.values());
    }
    return out;
  }

  /** The token pages (each page's token prefix from the root) {@code rank}'s cache holds. */
  public synchronized List<int[]> cachedPrefixes(int rank) {
    List<int[]> out = new ArrayList<>();
    collect(ranks[rank].root, new int[0], out);
    return out;
  }

  private void collect(Node n, int[] before, List<int[]> out) {
    int[] path = before;
    for (int p = 0; p < n.key.length / pageSize; p++) {
      path = concat(path, Arrays.copyOfRange(n.key, p * pageSize, (p + 1) * pageSize));
      out.add(path);
    }
    for (Node c : n.children.values()) {
      collect(c, path, out);
    }
  }

  // ---- the radix cache (radix_cache.py) ----

  private List<Integer> childKey(int[] key) {
    List<Integer> k = new ArrayList<>(pageSize);
    for (int i = 0; i < pageSize; i++) {
      k.add(key[i]);
    }
    return k;
  }

  /** {@code _key_match_paged}: tokens in whole pages that {@code a} and {@code b} share. */
  private int pageMatch(int[] a, int[] b) {
    int min = Math.min(a.length, b.length);
    int i = 0;
    while (i + pageSize <= min && Arrays.equals(a, i, i + pageSize, b, i, i + pageSize)) {
      i += pageSize;
    }
    return i;
  }

  /** Where a walk down the tree ended: the node reached, the tokens matched, the rest. */
  private record Walk(Node node, int matched, int[] rest) {}

  /**
   * {@code _match_prefix_helper} and the descent of {@code _insert_helper}: follows whole pages of
   * {@code key} from the root; a match that ends inside a node splits it there and ends the walk.
   */
  private Walk descend(Rank r, int[] key) {
    Node node = r.root;
    int matched = 0;
    while (key.length > 0) {
      Node child = node.children.get(childKey(key));
      if (child == null) {
        break;
      }
      child.lastAccess = ++r.clock;
      int p = pageMatch(child.key, key);
      matched += p;
      key = Arrays.copyOfRange(key, p, key.length);
      if (p < child.key.length) {
        node = split(r, child, p);
        break;
      }
      node = child;
    }
    return new Walk(node, matched, key);
  }

  private int matchPrefix(Rank r, int[] key) {
    return descend(r, key).matched();
  }

  private void insert(Rank r, int[] whole) {
    Walk w = descend(r, whole);
    Node node = w.node();
    int[] key = w.rest();
    if (key.length > 0) {
      Node n = new Node();
      n.parent = node;
      n.key = key;
      n.lastAccess = ++r.clock;
      n.hashes = hashes(node == r.root ? null : last(node.hashes), key);
      node.children.put(childKey(key), n);
      stored(r, n);
    }
  }

  /** {@code _split_node}: the child's first {@code len} tokens become a new node above it. */
  private Node split(Rank r, Node child, int len) {
    removed(r, child);
    Node n = new Node();
    n.parent = child.parent;
    n.key = Arrays.copyOf(child.key, len);
    n.hashes = new ArrayList<>(child.hashes.subList(0, len / pageSize));
    n.lastAccess = child.lastAccess;
    child.key = Arrays.copyOfRange(child.key, len, child.key.length);
    child.hashes = new ArrayList<>(child.hashes.subList(len / pageSize, child.hashes.size()));
    child.parent = n;
    n.children.put(childKey(child.key), child);
    n.parent.children.put(childKey(n.key), n);
    stored(r, n);
    stored(r, child);
    return n;
  }

  /** {@code evict}: least recently used leaves off the request's own path, page by page. */
  private void evict(Rank r, int pages, int[] protect) {
    while (pages > 0) {
      Node victim = null;
      for (Node leaf : leaves(r.root)) {
        if (!onPath(leaf, protect) && (victim == null || leaf.lastAccess < victim.lastAccess)) {
          victim = leaf;
        }
      }
      if (victim == null) {
        return;
      }
      victim.parent.children.remove(childKey(victim.key));
      removed(r, victim);
      pages -= victim.key.length / pageSize;
    }
  }

  private boolean onPath(Node n, int[] key) {
    List<int[]> keys = new ArrayList<>();
    for (Node x = n; x.parent != null; x = x.parent) {
      keys.add(0, x.key);
    }
    int[] path = new int[0];
    for (int[] k : keys) {
      path = concat(path, k);
    }
    return pageMatch(path, key) > 0;
  }

  private static List<Node> leaves(Node root) {
    List<Node> out = new ArrayList<>();
    List<Node> stack = new ArrayList<>(List.of(root));
    while (!stack.isEmpty()) {
      Node n = stack.remove(stack.size() - 1);
      if (n.children.isEmpty() && n != root) {
        out.add(n);
      }
      stack.addAll(n.children.values());
    }
    return out;
  }

  private int size(Node root) {
    int pages = 0;
    List<Node> stack = new ArrayList<>(List.of(root));
    while (!stack.isEmpty()) {
      Node n = stack.remove(stack.size() - 1);
      pages += n.key.length / pageSize;
      stack.addAll(n.children.values());
    }
    return pages;
  }

  // ---- hashes (get_hash_str, hash_str_to_int64) ----

  private List<String> hashes(String prior, int[] key) {
    List<String> out = new ArrayList<>();
    for (int p = 0; p < key.length / pageSize; p++) {
      prior = hashStr(Arrays.copyOfRange(key, p * pageSize, (p + 1) * pageSize), prior);
      out.add(prior);
    }
    return out;
  }

  private static String hashStr(int[] tokens, String prior) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      if (prior != null) {
        sha.update(HexFormat.of().parseHex(prior));
      }
      for (int t : tokens) {
        sha.update(new byte[] {(byte) t, (byte) (t >>> 8), (byte) (t >>> 16), (byte) (t >>> 24)});
      }
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code hash_str_to_int64}: the first 16 hex characters, as a signed 64-bit value. */
  static long toInt64(String hex) {
    return Long.parseUnsignedLong(hex.substring(0, 16), 16);
  }

  // ---- events and the publisher ----

  private void stored(Rank r, Node n) {
    Long parent = n.parent == r.root ? null : toInt64(last(n.parent.hashes));
    for (int p = 0; p < n.hashes.size(); p++) {
      long h = toInt64(n.hashes.get(p));
      int[] page = Arrays.copyOfRange(n.key, p * pageSize, (p + 1) * pageSize);
      Long par = parent;
      r.queued.add(
          pack(
              pk -> {
                pk.packArrayHeader(7);
                pk.packString("BlockStored");
                pk.packArrayHeader(1);
                pk.packLong(h);
                if (par != null) {
                  pk.packLong(par);
                } else {
                  pk.packNil();
                }
                pk.packArrayHeader(page.length);
                for (int t : page) {
                  pk.packInt(t);
                }
                pk.packInt(page.length);
                pk.packNil(); // lora_id
                pk.packString("GPU");
              }));
      parent = h;
    }
  }

  private void removed(Rank r, Node n) {
    for (String hex : n.hashes) {
      long h = toInt64(hex);
      r.queued.add(
          pack(
              pk -> {
                pk.packArrayHeader(3);
                pk.packString("BlockRemoved");
                pk.packArrayHeader(1);
                pk.packLong(h);
                pk.packString("GPU");
              }));
    }
  }

  private static byte[] allBlocksCleared() {
    return pack(
        pk -> {
          pk.packArrayHeader(1);
          pk.packString("AllBlocksCleared");
        });
  }

  /** {@code _publish_kv_events} then {@code ZmqEventPublisher._publisher_thread}. */
  private void publish(Rank r) {
    if (r.queued.isEmpty()) {
      return;
    }
    List<byte[]> events = new ArrayList<>(r.queued);
    r.queued.clear();
    byte[] payload =
        pack(
            pk -> {
              pk.packArrayHeader(3);
              pk.packDouble(System.currentTimeMillis() / 1000.0);
              pk.packArrayHeader(events.size());
              for (byte[] e : events) {
                pk.addPayload(e);
              }
              pk.packInt(r.index); // attn_dp_rank, filled in by the publisher
            });
    long seq = r.seq++;
    if (r.dropNext > 0) {
      r.dropNext--;
    } else {
      r.pub.sendMore(new byte[0]); // topic ""
      r.pub.sendMore(ZmqFrames.seq(seq));
      r.pub.send(payload);
    }
    r.buffer.addLast(payload);
    if (r.buffer.size() > BUFFER_STEPS) {
      r.buffer.removeFirst();
      r.firstBuffered++;
    }
  }

  private interface Packing {
    void accept(MessageBufferPacker p) throws IOException;
  }

  private static byte[] pack(Packing body) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      body.accept(p);
      return p.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // ---- HTTP (http_server.py) ----

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      switch (ex.getRequestURI().getPath()) {
        case "/health" -> EngineDoubles.respond(ex, 200, "");
        case "/get_model_info" ->
            EngineDoubles.respond(
                ex, 200, "{\"model_path\":\"m\",\"tokenizer_path\":\"m\",\"is_generation\":true}");
        case "/get_server_info" -> EngineDoubles.respond(ex, 200, serverInfo());
        case "/metrics" -> EngineDoubles.respond(ex, 200, metrics());
        case "/generate" -> generateRoute(ex, body);
        case "/v1/completions", "/v1/chat/completions" ->
            openAi(ex, body, ex.getRequestURI().getPath().endsWith("chat/completions"));
        default -> EngineDoubles.respond(ex, 404, "{\"detail\":\"Not Found\"}");
      }
    }
  }

  private String serverInfo() throws IOException {
    Map<String, Object> info = new HashMap<>();
    info.put("model_path", "m");
    info.put("page_size", pageSize);
    info.put("dp_size", ranks.length);
    info.put("enable_dp_attention", ranks.length > 1);
    info.put(
        "kv_events_config",
        "{\"publisher\":\"zmq\",\"endpoint\":\"tcp://*:"
            + pubBase
            + "\",\"replay_endpoint\":\"tcp://*:"
            + replayBase
            + "\"}");
    info.put("version", VERSION);
    return JSON.writeValueAsString(info);
  }

  /**
   * The rank that serves a request: the {@code X-Data-Parallel-Rank} header where the route reads
   * it (the OpenAI routes, ahead of the body: sgl-project/sglang #19832, {@code serving_base.py
   * extract_routed_dp_rank_from_header}; {@code /generate} ignores it, #38729), then the body's
   * {@code routed_dp_rank} or its deprecated alias {@code data_parallel_rank}, then round robin.
   */
  private synchronized int pickRank(HttpExchange ex, JsonNode request, boolean readsHeader) {
    if (readsHeader) {
      String h = ex.getRequestHeaders().getFirst("X-Data-Parallel-Rank");
      if (h != null) {
        int r = Integer.parseInt(h.trim());
        if (r >= 0 && r < ranks.length) {
          return r;
        }
      }
    }
    for (String field : new String[] {"routed_dp_rank", "data_parallel_rank"}) {
      JsonNode r = request.path(field);
      if (r.isInt() && r.asInt() >= 0 && r.asInt() < ranks.length) {
        return r.asInt();
      }
    }
    return roundRobin++ % ranks.length;
  }

  private void generateRoute(HttpExchange ex, String body) throws IOException {
    JsonNode req = JSON.readTree(body);
    int[] tokens =
        req.has("input_ids")
            ? EngineDoubles.tokens(req.path("input_ids"))
            : EngineDoubles.tokens(req.path("text"));
    int cached = generate(pickRank(ex, req, false), tokens);
    EngineDoubles.respond(
        ex,
        200,
        "{\"text\":\"x\",\"meta_info\":{\"prompt_tokens\":"
            + tokens.length
            + ",\"completion_tokens\":1,\"cached_tokens\":"
            + cached
            + ",\"finish_reason\":{\"type\":\"length\",\"length\":1}}}");
  }

  private void openAi(HttpExchange ex, String body, boolean chat) throws IOException {
    JsonNode req = JSON.readTree(body);
    int[] tokens;
    if (chat) {
      StringBuilder text = new StringBuilder();
      for (JsonNode m : req.path("messages")) {
        text.append(m.path("content").asText()).append('\n');
      }
      tokens = EngineDoubles.tokens(JSON.getNodeFactory().textNode(text.toString()));
    } else {
      tokens = EngineDoubles.tokens(req.path("prompt"));
    }
    int cached = generate(pickRank(ex, req, true), tokens);
    String choice =
        chat
            ? "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"x\"},"
            : "{\"index\":0,\"text\":\"x\",";
    EngineDoubles.respond(
        ex,
        200,
        "{\"id\":\"d\",\"object\":\""
            + (chat ? "chat.completion" : "text_completion")
            + "\",\"model\":\"m\",\"choices\":["
            + choice
            + "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":"
            + tokens.length
            + ",\"completion_tokens\":1,\"total_tokens\":"
            + (tokens.length + 1)
            + ",\"prompt_tokens_details\":{\"cached_tokens\":"
            + cached
            + "}}}");
  }

  /**
   * Per-rank gauges. {@code sglang:token_usage} counts pages locked by running requests only:
   * SGLang's scheduler reports {@code (max_total_num_tokens - (available_size + evictable_size)) /
   * max_total_num_tokens} ({@code scheduler_metrics_mixin.py}), and a cached page no request holds
   * is evictable. This double serves one request at a time and holds nothing between them, so an
   * idle rank reports 0 however full its cache.
   */
  private synchronized String metrics() {
    StringBuilder sb = new StringBuilder();
    for (Rank r : ranks) {
      String l = "{model_name=\"m\",engine_type=\"unified\",dp_rank=\"" + r.index + "\"}";
      sb.append("sglang:num_running_reqs").append(l).append(" 0.0\n");
      sb.append("sglang:num_queue_reqs").append(l).append(" 0.0\n");
      sb.append("sglang:token_usage").append(l).append(" 0.0\n");
    }
    return sb.toString();
  }

  // ---- sockets ----

  private ZMQ.Socket bind(SocketType type, int port) {
    ZMQ.Socket s = ctx.createSocket(type);
    s.setLinger(0);
    s.bind("tcp://" + HOST + ":" + port);
    return s;
  }

  private static String last(List<String> l) {
    return l.get(l.size() - 1);
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Override
  public void close() {
    http.stop(0);
    httpThreads.shutdownNow();
    for (Rank r : ranks) {
      r.stopped = true;
      try {
        r.replayThread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    synchronized (this) {
      ctx.close();
    }
  }
}
