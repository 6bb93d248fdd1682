package io.kvrouter.agent.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Builds the OpenAI response bodies of one generation (vLLM's shapes): {@code text_completion} /
 * {@code chat.completion} bodies and their streaming chunks, with usage including {@code
 * prompt_tokens_details.cached_tokens}. The sim never stops early, so finish_reason is "length".
 */
final class Responses {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private final String id;
  private final String model;
  private final long created;
  private final boolean chat;

  Responses(String id, String model, long created, boolean chat) {
    this.id = id;
    this.model = model;
    this.created = created;
    this.chat = chat;
  }

  private ObjectNode head(String object) {
    ObjectNode n = F.objectNode();
    n.put("id", id);
    n.put("object", object);
    n.put("created", created);
    n.put("model", model);
    return n;
  }

  static ObjectNode usage(Emission last) {
    ObjectNode u = F.objectNode();
    int completion = last.index() + 1;
    u.put("prompt_tokens", last.promptTokens());
    u.put("total_tokens", last.promptTokens() + completion);
    u.put("completion_tokens", completion);
    u.putObject("prompt_tokens_details").put("cached_tokens", last.cachedPromptTokens());
    return u;
  }

  JsonNode full(String text, Emission last) {
    ObjectNode n = head(chat ? "chat.completion" : "text_completion");
    ObjectNode c = n.putArray("choices").addObject();
    c.put("index", 0);
    if (chat) {
      ObjectNode m = c.putObject("message");
      m.put("role", "assistant");
      m.put("content", text);
    } else {
      c.put("text", text);
      c.putNull("logprobs");
    }
    c.put("finish_reason", "length");
    c.putNull("stop_reason");
    n.set("usage", usage(last));
    return n;
  }

  JsonNode roleChunk() {
    ObjectNode n = head("chat.completion.chunk");
    ObjectNode c = n.putArray("choices").addObject();
    c.put("index", 0);
    ObjectNode d = c.putObject("delta");
    d.put("role", "assistant");
    d.put("content", "");
    c.putNull("logprobs");
    c.putNull("finish_reason");
    return n;
  }

  JsonNode tokenChunk(String text, boolean last) {
    ObjectNode n = head(chat ? "chat.completion.chunk" : "text_completion");
    ObjectNode c = n.putArray("choices").addObject();
    c.put("index", 0);
    if (chat) {
      c.putObject("delta").put("content", text);
    } else {
      c.put("text", text);
    }
    c.putNull("logprobs");
    if (last) {
      c.put("finish_reason", "length");
    } else {
      c.putNull("finish_reason");
    }
    return n;
  }

  JsonNode usageChunk(Emission last) {
    ObjectNode n = head(chat ? "chat.completion.chunk" : "text_completion");
    n.putArray("choices");
    n.set("usage", usage(last));
    return n;
  }
}
