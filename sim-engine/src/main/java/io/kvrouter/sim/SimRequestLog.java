package io.kvrouter.sim;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The last requests a simulated engine generated for, as it saw them (after converting Anthropic
 * and Responses requests to chat, as vLLM does): the endpoint, the roles of the rendered messages,
 * the prompt and cached token counts, the tool it called, and the W3C {@code traceparent} header it
 * came with (so a test can check what a router forwarded). Served as {@code GET /sim/requests} so
 * tests can check what reached the engine; a test double's window, not a vLLM API. Bounded; the
 * methods are synchronized.
 */
final class SimRequestLog {

  private static final int CAPACITY = 256;

  private record Entry(
      long seq,
      String endpoint,
      List<String> roles,
      int promptTokens,
      int cachedTokens,
      String tool,
      String traceparent,
      int dpRank,
      String kvTransfer) {}

  private final ArrayDeque<Entry> entries = new ArrayDeque<>();
  private long seq;

  synchronized void add(String endpoint, GenerationRequest g, Emission first, String traceparent) {
    add(endpoint, g, first, traceparent, 0, SimKvHandshake.Part.NONE);
  }

  /** A request served by rank {@code dpRank}, with its part of a prefill/decode handshake. */
  synchronized void add(
      String endpoint,
      GenerationRequest g,
      Emission first,
      String traceparent,
      int dpRank,
      SimKvHandshake.Part part) {
    if (entries.size() == CAPACITY) {
      entries.removeFirst();
    }
    entries.addLast(
        new Entry(
            ++seq,
            endpoint,
            g.roles(),
            first.promptTokens(),
            first.cachedPromptTokens(),
            g.toolCall() == null ? null : g.toolCall().name(),
            traceparent,
            dpRank,
            part.name().toLowerCase(java.util.Locale.ROOT)));
  }

  /**
   * {@code {"requests":[{seq, endpoint, roles, prompt_tokens, cached_tokens, tool_call,
   * traceparent, dp_rank, kv_transfer}]}}; {@code kv_transfer} is {@code none}, {@code prefill}
   * (answered with transfer parameters), {@code decode} (pulled the prompt's KV) or {@code
   * invalid}.
   */
  synchronized ObjectNode toJson() {
    JsonNodeFactory f = JsonNodeFactory.instance;
    ObjectNode root = f.objectNode();
    ArrayNode list = root.putArray("requests");
    for (Entry e : entries) {
      ObjectNode o = list.addObject();
      o.put("seq", e.seq());
      o.put("endpoint", e.endpoint());
      ArrayNode roles = o.putArray("roles");
      e.roles().forEach(roles::add);
      o.put("prompt_tokens", e.promptTokens());
      o.put("cached_tokens", e.cachedTokens());
      if (e.tool() == null) {
        o.putNull("tool_call");
      } else {
        o.put("tool_call", e.tool());
      }
      if (e.traceparent() == null) {
        o.putNull("traceparent");
      } else {
        o.put("traceparent", e.traceparent());
      }
      o.put("dp_rank", e.dpRank());
      o.put("kv_transfer", e.kvTransfer());
    }
    return root;
  }
}
