package io.kvrouter.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A TensorRT-LLM engine behind {@code trtllm-serve} as the agent meets it, written from
 * TensorRT-LLM's source and not from kvrouter's simulated engine: {@code GET /health}, {@code GET
 * /version}, {@code GET /v1/models}, {@code GET /metrics} (iteration stats as JSON, not Prometheus
 * text), {@code POST /v1/completions}, {@code POST /v1/chat/completions} and {@code POST
 * /kv_cache_events}, which drains the event queue and answers it as a JSON array ({@code
 * tensorrt_llm/serve/openai_server.py} at {@code 00057725}; events as {@code
 * KVCacheEventSerializer} writes them, {@code tensorrt_llm/_utils.py} at {@code ed53795b}).
 *
 * <p>What matters, as TensorRT-LLM does it ({@code cpp/tensorrt_llm/batch_manager/}):
 *
 * <ul>
 *   <li>block hashes are {@code BlockKeyHasher::hash} ({@code kvCacheManager.cpp} at {@code
 *       b35ac1b6}): 64-bit, deterministic (no per-process seed), chained through the parent's hash,
 *       the first block's parent 0; serialized as unsigned JSON integers;
 *   <li>a context stores the blocks of its prompt but its last token, full blocks only ({@code
 *       storeContextBlocks}: {@code chopVectorIntoBlocks(tokens, size - 1, tokensPerBlock,
 *       false)}); when the request ends its blocks are stored for reuse with a partial last block
 *       ({@code releaseBlocks}), which is announced like any other;
 *   <li>a new cache block is taken from the least recently used free leaf: with room in host memory
 *       (secondary level) the block is offloaded there ({@code updated}, level 0 to 1) and what it
 *       displaced there is {@code removed}; without, it is {@code removed}. A reused block in host
 *       memory is onboarded back ({@code updated}, level 1 to 0). Consecutive removals join one
 *       {@code removed} event ({@code enqueueRemovedEvent}). An offload or onboard sets only the
 *       level's diff ({@code KVCacheUpdatedData(hash).cacheLevelUpdated(..)}); the unset priority
 *       diff is written {@code null} (at {@code ed53795b} the serializer reads {@code new_value} of
 *       it unchecked, and the bindings give {@code None}; a reader must take both);
 *   <li>event ids count from 0 per process, the first events being {@code created} (one per window
 *       size); the queue keeps at most {@code event_buffer_max_size} events and drops the oldest;
 *   <li>{@link #restart} is a new process that says nothing: ids from 0, empty cache, {@code
 *       created} first; {@code /health} never fails;
 *   <li>{@code GET /metrics} answers the iteration stats queued since the last call, one JSON
 *       object per iteration with the fields of {@code IterationStats} as {@code
 *       JsonSerialization::toJsonStr} writes them ({@code
 *       cpp/tensorrt_llm/executor/jsonSerialization.cpp} at {@code 086f6921}), and drains them;
 *       after a call the stats stay closed, answering {@code []}, until a request is submitted
 *       ({@code IterationResult}, whose {@code _done} only {@code mark_undone} at submission
 *       clears, {@code tensorrt_llm/executor/result.py} at {@code 005bc848}). {@code usedNumBlocks}
 *       counts the blocks held by requests in flight: blocks kept for reuse are free, as the
 *       engine's eviction policy counts them ({@code kvCacheManager.cpp} at {@code b35ac1b6}).
 * </ul>
 *
 * <p>Simplifications: {@code /metrics} answers at once (the engine waits 2 s for one more stat); a
 * served request is one iteration with itself active; only the deepest block of a path at its level
 * is evicted (TensorRT-LLM frees an evicted block's children too). Text prompts are tokenized as
 * UTF-8 bytes + 3 ({@link EngineDoubles}). Thread-safe.
 */
public final class TrtllmEngineDouble implements AutoCloseable {

  /** What its {@code GET /version} answers ({@code {"version": VERSION}}, as trtllm-serve does). */
  public static final String VERSION = "1.2.0rc1";

  private static final String HOST = "127.0.0.1";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final int WINDOW = 4096; // max_seq_len: one window, full attention
  private static final int PRIMARY = 0;
  private static final int SECONDARY = 1;

  /** One cache block: a node of the radix tree. */
  private static final class Block {
    final long hash;
    final Block parent;
    final int[] tokens;
    final Map<String, Block> children = new HashMap<>();
    int level = PRIMARY;
    long lastUse;

    Block(long hash, Block parent, int[] tokens) {
      this.hash = hash;
      this.parent = parent;
      this.tokens = tokens;
    }
  }

  private final String model;
  private final int blockSize;
  private final int primaryBlocks;
  private final int secondaryBlocks;
  private final int bufferMax;
  private final HttpServer http;
  private final ExecutorService httpThreads = Executors.newFixedThreadPool(2);
  private final Block root = new Block(0, null, new int[0]);
  private final Deque<ObjectNode> queue = new ArrayDeque<>();
  private final List<ObjectNode> stats = new ArrayList<>();
  private boolean statsClosed;
  private long iteration;
  private long nextEventId;
  private long clock;

  /**
   * @param model the served model's name ({@code /v1/models})
   * @param blockSize {@code tokens_per_block}
   * @param primaryBlocks GPU blocks
   * @param secondaryBlocks host-memory blocks ({@code host_cache_size}), 0 for none
   * @param bufferMax {@code event_buffer_max_size}
   */
  public TrtllmEngineDouble(
      String model, int blockSize, int primaryBlocks, int secondaryBlocks, int bufferMax)
      throws IOException {
    this.model = model;
    this.blockSize = blockSize;
    this.primaryBlocks = primaryBlocks;
    this.secondaryBlocks = secondaryBlocks;
    this.bufferMax = bufferMax;
    newProcess();
    http = HttpServer.create(new InetSocketAddress(HOST, 0), 16);
    http.setExecutor(httpThreads);
    http.createContext("/", this::handle);
    http.start();
  }

  /**
   * The engine's {@code http://host:port}: its OpenAI routes, and the kv-events endpoint of its
   * replica (the agent polls {@code /kv_cache_events} there).
   */
  public String baseUrl() {
    return "http://" + HOST + ":" + http.getAddress().getPort();
  }

  /** The served model's name. */
  public String model() {
    return model;
  }

  /** {@code tokens_per_block}. */
  public int blockSize() {
    return blockSize;
  }

  private void newProcess() {
    root.children.clear();
    queue.clear();
    nextEventId = 0;
    stats.clear();
    statsClosed = false;
    iteration = 0;
    ObjectNode created = NODES.objectNode().put("type", "created");
    created.putArray("num_blocks_per_cache_level").add(primaryBlocks).add(secondaryBlocks);
    enqueue(created);
  }

  /** The engine restarts, announcing nothing: ids from 0, empty cache, {@code created} first. */
  public synchronized void restart() {
    newProcess();
  }

  /**
   * Serves {@code prompt} while another client of {@code /kv_cache_events} takes the queue: no poll
   * can come between, so the agent never sees the events of this request (nor any queued before
   * it). The route drains one queue, so a second reader (or a queue past {@code
   * event_buffer_max_size}) loses events this way.
   *
   * @return the events lost
   */
  public synchronized int completeUnseen(int[] prompt) {
    complete(prompt);
    int n = queue.size();
    queue.clear();
    return n;
  }

  /**
   * Serves one request of {@code prompt} that generates one token: context blocks stored, then
   * released with the partial last block.
   *
   * @return the prompt tokens it found cached
   */
  public synchronized int complete(int[] prompt) {
    int cached = store(prompt, prompt.length - 1, false, true);
    iterate(1, 0, (prompt.length + 1 + blockSize - 1) / blockSize);
    store(prompt, prompt.length, true, false); // released: prompt + 1 generated, minus the last
    return cached;
  }

  /**
   * A request is submitted and the engine runs one iteration with {@code active} requests in the
   * batch, {@code queued} waiting and {@code heldBlocks} primary blocks held by them: one stat is
   * queued for {@code /metrics}, and the stats open again.
   */
  public synchronized void iterate(int active, int queued, int heldBlocks) {
    statsClosed = false;
    int used = Math.min(primaryBlocks, heldBlocks);
    ObjectNode s = NODES.objectNode();
    s.put("iter", iteration++)
        .put("iterLatencyMS", 20.0)
        .put("newActiveRequestsQueueLatencyMS", 0.0)
        .put("numNewActiveRequests", 1)
        .put("numActiveRequests", active)
        .put("numQueuedRequests", queued)
        .put("numCompletedRequests", 0)
        .put("maxNumActiveRequests", 256)
        .put("gpuMemUsage", 0L)
        .put("cpuMemUsage", 0L)
        .put("pinnedMemUsage", 0L);
    s.putObject("kvCacheStats")
        .put("maxNumBlocks", primaryBlocks)
        .put("freeNumBlocks", primaryBlocks - used)
        .put("usedNumBlocks", used)
        .put("tokensPerBlock", blockSize)
        .put("allocTotalBlocks", 0)
        .put("allocNewBlocks", 0)
        .put("reusedBlocks", 0)
        .put("missedBlocks", 0)
        .put("cacheHitRate", 0.0);
    s.putNull("staticBatchingStats");
    s.putObject("inflightBatchingStats")
        .put("numScheduledRequests", active)
        .put("numContextRequests", 0)
        .put("numGenRequests", active)
        .put("numPausedRequests", 0)
        .put("numCtxTokens", 0)
        .put("microBatchId", 0)
        .put("avgNumDecodedTokensPerIter", 1.0);
    s.putNull("specDecodingStats");
    stats.add(s);
  }

  /** What {@code GET /metrics} answers: the queued stats, or none once closed; then closed. */
  private synchronized String drainStats() throws IOException {
    ArrayNode out = NODES.arrayNode();
    if (!statsClosed) {
      out.addAll(stats);
      stats.clear();
    }
    statsClosed = true;
    return JSON.writeValueAsString(out);
  }

  /**
   * Stores the blocks of {@code tokens[0, usable)} along the tree ({@code storeBlocks}): the ones
   * held are touched (and onboarded), the new ones announced in one {@code stored} event.
   *
   * @return the tokens of the leading blocks that were held already
   */
  private int store(int[] tokens, int usable, boolean partial, boolean reuse) {
    Block b = root;
    Block parentOfNew = null;
    List<Block> added = new ArrayList<>();
    int cached = 0;
    for (int from = 0; from < usable; from += blockSize) {
      int to = Math.min(usable, from + blockSize);
      if (to - from < blockSize && !partial) {
        break;
      }
      int[] ts = Arrays.copyOfRange(tokens, from, to);
      Block next = b.children.get(Arrays.toString(ts));
      if (next != null && added.isEmpty()) {
        cached += ts.length;
        if (reuse && next.level == SECONDARY) {
          onboard(next);
        }
      } else {
        if (added.isEmpty()) {
          parentOfNew = b;
        }
        next = allocate(b, ts);
        added.add(next);
      }
      next.lastUse = ++clock;
      b = next;
    }
    storedEvent(parentOfNew, added);
    return cached;
  }

  /** A new block under {@code parent} holding {@code tokens}, evicting to make room. */
  private Block allocate(Block parent, int[] tokens) {
    if (count(PRIMARY) >= primaryBlocks) {
      evictPrimary(parent);
    }
    Block n = new Block(hash(tokens, parent.hash), parent, tokens);
    parent.children.put(Arrays.toString(tokens), n);
    return n;
  }

  /** Frees the least recently used primary leaf: offloaded when host memory has room. */
  private void evictPrimary(Block keep) {
    Block victim = lru(PRIMARY, keep);
    if (victim == null) {
      throw new IllegalStateException("no free primary block");
    }
    if (secondaryBlocks > 0) {
      if (count(SECONDARY) >= secondaryBlocks) {
        Block gone = lru(SECONDARY, keep);
        if (gone != null) {
          drop(gone);
        }
      }
      if (count(SECONDARY) < secondaryBlocks) {
        victim.level = SECONDARY;
        updatedEvent(victim.hash, PRIMARY, SECONDARY);
        return;
      }
    }
    drop(victim);
  }

  /** Brings a reused host-memory block back to the GPU. */
  private void onboard(Block b) {
    if (count(PRIMARY) >= primaryBlocks) {
      evictPrimary(b);
    }
    b.level = PRIMARY;
    updatedEvent(b.hash, SECONDARY, PRIMARY);
  }

  private void drop(Block b) {
    b.parent.children.remove(Arrays.toString(b.tokens));
    removedEvent(b.hash);
  }

  private Block lru(int level, Block keep) {
    Block best = null;
    for (Block b : all()) {
      if (b.level == level && b != keep && evictable(b)) {
        if (best == null || b.lastUse < best.lastUse) {
          best = b;
        }
      }
    }
    return best;
  }

  /**
   * A block whose children all live in host memory (none, for a host-memory block): the deepest of
   * its path at its level. A host-memory block's children are always in host memory too.
   */
  private static boolean evictable(Block b) {
    for (Block c : b.children.values()) {
      if (c.level == PRIMARY || b.level == SECONDARY) {
        return false;
      }
    }
    return true;
  }

  private int count(int level) {
    int n = 0;
    for (Block b : all()) {
      n += b.level == level ? 1 : 0;
    }
    return n;
  }

  private List<Block> all() {
    List<Block> out = new ArrayList<>();
    Deque<Block> todo = new ArrayDeque<>(root.children.values());
    while (!todo.isEmpty()) {
      Block b = todo.pop();
      out.add(b);
      todo.addAll(b.children.values());
    }
    return out;
  }

  /**
   * The token prefix (from the first block on) of every full block the engine holds at {@code
   * level}, by engine hash: what the agent's picture of that tier must be.
   */
  public synchronized Map<Long, int[]> fullBlocks(int level) {
    Map<Long, int[]> out = new LinkedHashMap<>();
    for (Block b : all()) {
      if (b.level == level && b.tokens.length == blockSize) {
        List<int[]> chain = new ArrayList<>();
        for (Block p = b; p != root; p = p.parent) {
          chain.add(0, p.tokens);
        }
        out.put(b.hash, chain.stream().flatMapToInt(Arrays::stream).toArray());
      }
    }
    return out;
  }

  /**
   * {@code BlockKeyHasher::hash(blockKey, parentHash)} for a block without extra ids, adapter,
   * multimodal keys or salt: size_t arithmetic (unsigned 64-bit), the token mix in uint32.
   */
  public static long hash(int[] tokens, long parentHash) {
    long seed = tokens.length ^ (parentHash * 0xbf58476d1ce4e5b9L);
    for (int t : tokens) {
      int a = t;
      a = ((a >>> 16) ^ a) * 0x45d9f3b;
      a = ((a >>> 16) ^ a) * 0x45d9f3b;
      a = (a >>> 16) ^ a;
      long mixed = Integer.toUnsignedLong(a + 0x9e3779b9); // uint32 + uint32 wraps in 32 bits
      seed ^= mixed + (seed << 6) + (seed >>> 2);
    }
    return seed;
  }

  private void storedEvent(Block parent, List<Block> blocks) {
    if (blocks.isEmpty()) {
      return;
    }
    ObjectNode data = NODES.objectNode().put("type", "stored");
    if (parent == null || parent == root) {
      data.putNull("parent_hash");
    } else {
      data.put("parent_hash", unsigned(parent.hash));
    }
    ArrayNode bs = data.putArray("blocks");
    for (Block b : blocks) {
      ObjectNode o = bs.addObject().put("type", "stored_block");
      o.put("block_hash", unsigned(b.hash));
      ArrayNode ts = o.putArray("tokens");
      for (int t : b.tokens) {
        ts.addObject().put("type", "unique_token").put("token_id", t).put("token_extra_id", 0);
      }
      o.put("cache_level", b.level).put("priority", 35);
    }
    enqueue(data);
  }

  private void removedEvent(long hash) {
    ObjectNode last = queue.peekLast();
    if (last != null && last.path("data").path("type").asText().equals("removed")) {
      ((ArrayNode) last.path("data").path("block_hashes")).add(unsigned(hash));
      return;
    }
    ObjectNode data = NODES.objectNode().put("type", "removed");
    data.putArray("block_hashes").add(unsigned(hash));
    enqueue(data);
  }

  private void updatedEvent(long hash, int from, int to) {
    ObjectNode data = NODES.objectNode().put("type", "updated");
    data.put("block_hash", unsigned(hash));
    data.putObject("cache_level")
        .put("type", "event_diff")
        .put("new_value", to)
        .put("old_value", from);
    data.putNull("priority");
    enqueue(data);
  }

  private void enqueue(ObjectNode data) {
    ObjectNode e = NODES.objectNode().put("event_id", nextEventId++);
    e.set("data", data);
    e.put("window_size", WINDOW);
    queue.addLast(e);
    while (queue.size() > bufferMax) {
      queue.removeFirst(); // "Events have been discarded."
    }
  }

  private static BigInteger unsigned(long v) {
    return new BigInteger(Long.toUnsignedString(v));
  }

  private synchronized String drain() throws IOException {
    ArrayNode out = NODES.arrayNode();
    out.addAll(queue);
    queue.clear();
    return JSON.writeValueAsString(out);
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      String path = ex.getRequestURI().getPath();
      boolean post = ex.getRequestMethod().equals("POST");
      switch (path) {
        case "/health" -> EngineDoubles.respond(ex, 200, "");
        case "/version" -> EngineDoubles.respond(ex, 200, "{\"version\":\"" + VERSION + "\"}");
        case "/metrics" -> EngineDoubles.respond(ex, 200, drainStats());
        case "/v1/models" ->
            EngineDoubles.respond(
                ex,
                200,
                "{\"object\":\"list\",\"data\":[{\"id\":\"" + model + "\",\"object\":\"model\"}]}");
        case "/kv_cache_events" -> {
          if (post) {
            EngineDoubles.respond(ex, 200, drain());
          } else {
            EngineDoubles.respond(ex, 405, "{\"detail\":\"Method Not Allowed\"}");
          }
        }
        case "/v1/completions" -> answer(ex, JSON.readTree(body).path("prompt"), false);
        case "/v1/chat/completions" -> answer(ex, chatText(JSON.readTree(body)), true);
        default -> EngineDoubles.respond(ex, 404, "{\"detail\":\"Not Found\"}");
      }
    }
  }

  /** The chat's messages as one text (the double's stand-in for the chat template). */
  private static JsonNode chatText(JsonNode req) {
    StringBuilder sb = new StringBuilder();
    for (JsonNode m : req.path("messages")) {
      sb.append(m.path("role").asText())
          .append(": ")
          .append(m.path("content").asText())
          .append('\n');
    }
    return new TextNode(sb.toString());
  }

  private void answer(HttpExchange ex, JsonNode prompt, boolean chat) throws IOException {
    int[] tokens = EngineDoubles.tokens(prompt);
    int cached = complete(tokens);
    String choice =
        chat
            ? "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"x\"},"
                + "\"finish_reason\":\"length\"}"
            : "{\"index\":0,\"text\":\"x\",\"finish_reason\":\"length\"}";
    EngineDoubles.respond(
        ex,
        200,
        "{\"object\":\""
            + (chat ? "chat.completion" : "text_completion")
            + "\",\"model\":\""
            + model
            + "\",\"choices\":["
            + choice
            + "],\"usage\":{\"prompt_tokens\":"
            + tokens.length
            + ",\"completion_tokens\":1,\"total_tokens\":"
            + (tokens.length + 1)
            + ",\"prompt_tokens_details\":{\"cached_tokens\":"
            + cached
            + "}}}");
  }

  @Override
  public void close() {
    http.stop(0);
    httpThreads.shutdownNow();
  }
}
