package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Builds the OpenAI response bodies of one generation (vLLM's shapes): {@code text_completion} /
 * {@code chat.completion} bodies and their streaming chunks, with usage including {@code
 * prompt_tokens_details.cached_tokens}. Text runs to {@code max_tokens} (the sim never stops early:
 * finish_reason "length"); a tool call ends with finish_reason "tool_calls", streamed as vLLM's
 * tool parsers stream it (one delta with the call's id and function name, then deltas of its
 * arguments).
 */
final class ChatBodies {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private final String id;
  private final String model;
  private final long created;
  private final boolean chat;

  ChatBodies(String id, String model, long created, boolean chat) {
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

  JsonNode full(SimRun run) {
    ObjectNode n = head(chat ? "chat.completion" : "text_completion");
    ObjectNode c = n.putArray("choices").addObject();
    c.put("index", 0);
    if (chat) {
      ObjectNode m = c.putObject("message");
      m.put("role", "assistant");
      SimToolCalls.Call call = run.call();
      if (call == null) {
        m.put("content", run.text());
      } else {
        m.putNull("content");
        ObjectNode tc = m.putArray("tool_calls").addObject();
        tc.put("id", call.id());
        tc.put("type", "function");
        tc.putObject("function").put("name", call.name()).put("arguments", call.arguments());
      }
    } else {
      c.put("text", run.text());
      c.putNull("logprobs");
    }
    c.put("finish_reason", run.finishReason());
    c.putNull("stop_reason");
    n.set("usage", usage(run.last()));
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

  JsonNode tokenChunk(SimRun.Delta delta, String finishReason) {
    ObjectNode n = head(chat ? "chat.completion.chunk" : "text_completion");
    ObjectNode c = n.putArray("choices").addObject();
    c.put("index", 0);
    if (!chat) {
      c.put("text", delta.text());
    } else if (delta.call() == null) {
      c.putObject("delta").put("content", delta.text());
    } else {
      ObjectNode tc = c.putObject("delta").putArray("tool_calls").addObject();
      tc.put("index", 0);
      if (delta.callIndex() == 0) {
        tc.put("id", delta.call().id());
        tc.put("type", "function");
        tc.putObject("function").put("name", delta.call().name());
      } else {
        tc.putObject("function").put("arguments", delta.arguments());
      }
    }
    c.putNull("logprobs");
    if (delta.emission().finished()) {
      c.put("finish_reason", finishReason);
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
