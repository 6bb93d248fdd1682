package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The simulated engine's OpenAI Responses API, served the way vLLM serves it for non-harmony models
 * (vllm-project/vllm {@code vllm/entrypoints/openai/responses/serving.py}, {@code utils.py}, {@code
 * simple_streaming_events.py}).
 *
 * <p>Input: {@code instructions} become a system message; with {@code previous_response_id} the
 * stored messages of that response follow, then the text of its output messages as assistant
 * messages (its function calls are skipped, as vLLM does); then the new input: a string is a user
 * message, {@code function_call} items become assistant tool calls, {@code function_call_output}
 * items tool messages, other items pass as chat messages. Tools become {@code {"type":"function",
 * "function": <the tool as the openai package dumps it>}} and are dropped when {@code tool_choice}
 * is {@code "none"}.
 *
 * <p>State: responses are kept (in memory, never evicted) only when the engine runs with the store
 * on ({@link SimApis#responsesStore()}, vLLM's {@code VLLM_ENABLE_RESPONSES_API_STORE=1}) and the
 * request does not say {@code store: false}; a {@code previous_response_id} the engine does not
 * hold is a 404. Status is {@code completed}, or {@code incomplete} when the output ran into {@code
 * max_output_tokens}. Thread-safe (the store is synchronized).
 */
final class SimResponsesApi {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  /** A response the engine holds: the messages it was generated from, and its output items. */
  private record Stored(ArrayNode messages, ArrayNode output) {}

  private final boolean store;
  private final Map<String, Stored> stored = new LinkedHashMap<>();

  SimResponsesApi(boolean store) {
    this.store = store;
  }

  /** The chat request vLLM renders for a Responses request. */
  ObjectNode toChat(JsonNode body) {
    ObjectNode chat = F.objectNode();
    if (body.has("model")) {
      chat.set("model", body.get("model"));
    }
    ArrayNode messages = chat.putArray("messages");
    String instructions = body.path("instructions").asText("");
    if (!instructions.isEmpty()) {
      messages.addObject().put("role", "system").put("content", instructions);
    }
    String previous = body.path("previous_response_id").asText("");
    if (!previous.isEmpty()) {
      Stored prev;
      synchronized (stored) {
        prev = stored.get(previous);
      }
      if (prev == null) {
        throw new SimApiError(
            404,
            "invalid_request_error",
            "Response with id '" + previous + "' not found.",
            "previous_response_id");
      }
      messages.addAll(prev.messages());
      for (JsonNode item : prev.output()) {
        if ("message".equals(item.path("type").asText())) {
          for (JsonNode part : item.path("content")) {
            messages
                .addObject()
                .put("role", "assistant")
                .put("content", part.path("text").asText());
          }
        }
      }
    }
    JsonNode input = body.path("input");
    if (input.isTextual()) {
      messages.addObject().put("role", "user").put("content", input.asText());
    } else if (input.isArray()) {
      for (JsonNode item : input) {
        messages.add(message(item));
      }
    } else {
      throw SimApiError.badRequest("'input' must be a string or a list of items", "input");
    }
    JsonNode tools = body.path("tools");
    String choice = body.path("tool_choice").asText("auto");
    if (tools.isArray() && !tools.isEmpty() && !"none".equals(choice)) {
      ArrayNode out = chat.putArray("tools");
      for (JsonNode t : tools) {
        ObjectNode fn = F.objectNode();
        fn.set("name", t.get("name"));
        fn.set("parameters", orNull(t.get("parameters")));
        fn.set("strict", orNull(t.get("strict")));
        fn.set("type", t.get("type"));
        fn.set("description", orNull(t.get("description")));
        t.fields()
            .forEachRemaining(
                e -> {
                  if (!fn.has(e.getKey())) {
                    fn.set(e.getKey(), e.getValue());
                  }
                });
        out.addObject().put("type", "function").set("function", fn);
      }
      JsonNode tc = body.path("tool_choice");
      if (tc.isObject()) {
        chat.putObject("tool_choice")
            .put("type", "function")
            .putObject("function")
            .put("name", tc.path("name").asText());
      } else {
        chat.put("tool_choice", choice);
      }
    }
    if (body.has("max_output_tokens")) {
      chat.set("max_tokens", body.get("max_output_tokens"));
    }
    if (body.has("stream")) {
      chat.set("stream", body.get("stream"));
    }
    return chat;
  }

  private static JsonNode orNull(JsonNode v) {
    return v == null ? F.nullNode() : v;
  }

  private static JsonNode message(JsonNode item) {
    String type = item.path("type").asText("message");
    switch (type) {
      case "function_call" -> {
        ObjectNode m = F.objectNode().put("role", "assistant");
        ObjectNode call = m.putArray("tool_calls").addObject();
        call.put("id", item.path("call_id").asText());
        call.putObject("function")
            .put("name", item.path("name").asText())
            .put("arguments", item.path("arguments").asText());
        call.put("type", "function");
        return m;
      }
      case "function_call_output" -> {
        return F.objectNode()
            .put("role", "tool")
            .put("content", item.path("output").asText())
            .put("tool_call_id", item.path("call_id").asText());
      }
      default -> {
        if ("assistant".equals(item.path("role").asText())
            && item.path("content").isArray()
            && item.has("id")) {
          return F.objectNode()
              .put("role", "assistant")
              .put("content", item.path("content").path(0).path("text").asText());
        }
        return item;
      }
    }
  }

  /** Remembers a finished response when the store is on and the request allows it. */
  void remember(JsonNode request, ObjectNode chat, ObjectNode response) {
    if (store && request.path("store").asBoolean(true)) {
      synchronized (stored) {
        stored.put(
            response.path("id").asText(),
            new Stored(chat.withArray("messages").deepCopy(), response.withArray("output")));
      }
    }
  }

  /** The response object of a generation ({@code status} and {@code output} as it stands). */
  static ObjectNode response(
      String id, String model, long created, JsonNode request, SimRun run, String status) {
    ObjectNode r = F.objectNode();
    r.put("id", id);
    r.put("object", "response");
    r.put("created_at", created);
    r.put("status", status);
    r.putNull("error");
    if ("incomplete".equals(status)) {
      r.putObject("incomplete_details").put("reason", "max_output_tokens");
    } else {
      r.putNull("incomplete_details");
    }
    r.set("instructions", orNull(request.get("instructions")));
    r.set("max_output_tokens", orNull(request.get("max_output_tokens")));
    r.put("model", model);
    ArrayNode output = r.putArray("output");
    if (run != null && run.last() != null && !"in_progress".equals(status)) {
      output.add(outputItem(id, run, "completed"));
    }
    r.put("parallel_tool_calls", request.path("parallel_tool_calls").asBoolean(true));
    r.set("previous_response_id", orNull(request.get("previous_response_id")));
    r.set("temperature", orNull(request.get("temperature")));
    r.set(
        "tool_choice",
        request.has("tool_choice") ? request.get("tool_choice") : F.textNode("auto"));
    r.set("tools", request.has("tools") ? request.get("tools") : F.arrayNode());
    r.set("top_p", orNull(request.get("top_p")));
    r.put("truncation", "disabled");
    if (run != null && run.last() != null && !"in_progress".equals(status)) {
      Emission last = run.last();
      ObjectNode u = r.putObject("usage");
      u.put("input_tokens", last.promptTokens());
      u.putObject("input_tokens_details").put("cached_tokens", last.cachedPromptTokens());
      u.put("output_tokens", last.index() + 1);
      u.putObject("output_tokens_details").put("reasoning_tokens", 0);
      u.put("total_tokens", last.promptTokens() + last.index() + 1);
    } else {
      r.putNull("usage");
    }
    return r;
  }

  /** {@code completed}, or {@code incomplete} when text ran into the token limit. */
  static String status(SimRun run) {
    return "length".equals(run.finishReason()) ? "incomplete" : "completed";
  }

  private static ObjectNode outputItem(String responseId, SimRun run, String status) {
    SimToolCalls.Call call = run.call();
    ObjectNode item = F.objectNode();
    if (call != null) {
      item.put("type", "function_call");
      item.put("id", "fc_" + responseId.substring(responseId.indexOf('_') + 1));
      item.put("call_id", call.id());
      item.put("name", call.name());
      item.put("arguments", call.arguments());
      item.put("status", status);
      return item;
    }
    item.put("type", "message");
    item.put("id", "msg_" + responseId.substring(responseId.indexOf('_') + 1));
    item.put("role", "assistant");
    item.put("status", status);
    ArrayNode content = item.putArray("content");
    content
        .addObject()
        .put("type", "output_text")
        .put("text", run.text())
        .set("annotations", F.arrayNode());
    return item;
  }

  /**
   * Writes a generation as the Responses event stream; returns the final response object, which
   * {@code beforeCompleted} receives before the {@code response.completed} event is written (a
   * client may continue from the response as soon as it reads that event).
   */
  static ObjectNode stream(
      OutputStream os,
      String id,
      String model,
      long created,
      JsonNode request,
      SimRun run,
      Consumer<ObjectNode> beforeCompleted)
      throws IOException, InterruptedException {
    int[] seq = {0};
    ObjectNode inProgress = response(id, model, created, request, null, "in_progress");
    event(os, seq, F.objectNode().put("type", "response.created").set("response", inProgress));
    event(os, seq, F.objectNode().put("type", "response.in_progress").set("response", inProgress));
    SimRun.Delta d = run.next();
    String itemId = (d.call() == null ? "msg_" : "fc_") + id.substring(id.indexOf('_') + 1);
    ObjectNode added = F.objectNode().put("type", "response.output_item.added");
    added.put("output_index", 0);
    ObjectNode item = added.putObject("item");
    if (d.call() == null) {
      item.put("id", itemId).put("type", "message").put("role", "assistant");
      item.putArray("content");
      item.put("status", "in_progress");
      event(os, seq, added);
      ObjectNode part = F.objectNode().put("type", "response.content_part.added");
      part.put("item_id", itemId).put("output_index", 0).put("content_index", 0);
      part.putObject("part")
          .put("type", "output_text")
          .put("text", "")
          .set("annotations", F.arrayNode());
      event(os, seq, part);
    } else {
      item.put("type", "function_call").put("id", itemId).put("call_id", d.call().id());
      item.put("name", d.call().name()).put("arguments", "").put("status", "in_progress");
      event(os, seq, added);
    }
    for (; d != null; d = run.next()) {
      if (d.call() == null) {
        ObjectNode delta = F.objectNode().put("type", "response.output_text.delta");
        delta.put("item_id", itemId).put("output_index", 0).put("content_index", 0);
        delta.put("delta", d.text()).set("logprobs", F.arrayNode());
        event(os, seq, delta);
      } else if (!d.arguments().isEmpty()) {
        ObjectNode delta = F.objectNode().put("type", "response.function_call_arguments.delta");
        delta.put("item_id", itemId).put("output_index", 0).put("delta", d.arguments());
        event(os, seq, delta);
      }
    }
    ObjectNode done = response(id, model, created, request, run, status(run));
    JsonNode finalItem = done.path("output").path(0);
    if (run.call() == null) {
      ObjectNode textDone = F.objectNode().put("type", "response.output_text.done");
      textDone.put("item_id", itemId).put("output_index", 0).put("content_index", 0);
      textDone.put("text", run.text()).set("logprobs", F.arrayNode());
      event(os, seq, textDone);
      ObjectNode partDone = F.objectNode().put("type", "response.content_part.done");
      partDone.put("item_id", itemId).put("output_index", 0).put("content_index", 0);
      partDone.set("part", finalItem.path("content").path(0));
      event(os, seq, partDone);
    } else {
      ObjectNode argsDone = F.objectNode().put("type", "response.function_call_arguments.done");
      argsDone.put("item_id", itemId).put("output_index", 0);
      argsDone.put("arguments", run.call().arguments());
      event(os, seq, argsDone);
    }
    ObjectNode itemDone = F.objectNode().put("type", "response.output_item.done");
    itemDone.put("output_index", 0).set("item", finalItem);
    event(os, seq, itemDone);
    beforeCompleted.accept(done);
    event(os, seq, F.objectNode().put("type", "response.completed").set("response", done));
    return done;
  }

  private static void event(OutputStream os, int[] seq, ObjectNode payload) throws IOException {
    payload.put("sequence_number", seq[0]++);
    os.write(
        ("event: "
                + payload.path("type").asText()
                + "\ndata: "
                + JSON.writeValueAsString(payload)
                + "\n\n")
            .getBytes(StandardCharsets.UTF_8));
    os.flush();
  }
}
