package io.kvrouter.agent.sim;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The last requests a simulated engine generated for, as it saw them (after converting Anthropic
 * and Responses requests to chat, as vLLM does): the endpoint, the roles of the rendered messages,
 * the prompt and cached token counts, the tool it called. Served as {@code GET /sim/requests} so
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
      String tool) {}

  private final ArrayDeque<Entry> entries = new ArrayDeque<>();
  private long seq;

  synchronized void add(String endpoint, GenerationRequest g, Emission first) {
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
            g.toolCall() == null ? null : g.toolCall().name()));
  }

  /** {@code {"requests":[{seq, endpoint, roles, prompt_tokens, cached_tokens, tool_call}]}}. */
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
    }
    return root;
  }
}
