package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Validates an OpenAI Responses API request ({@code POST /v1/responses}) and works out the prompt
 * the engine will render for it, so it is routed like chat: tokenized, hashed, placed on the
 * replica with the longest cached prefix. The request itself goes to the engine unchanged (only
 * engines serving {@code /v1/responses} are chosen), except that a {@code previous_response_id}
 * issued by kvrouter is turned back into the engine's id and pins the request to the replica that
 * holds it ({@link ResponseIds}).
 *
 * <p>The conversation is vLLM's ({@code vllm/entrypoints/openai/responses/utils.py} {@code
 * construct_input_messages}, {@code construct_tool_dicts}): {@code instructions} as a system
 * message, a string {@code input} as a user message, {@code function_call} items as assistant tool
 * calls, {@code function_call_output} items as tool messages, assistant output messages as their
 * first text, other items as chat messages ({@code input_text} and {@code output_text} parts read
 * as text); each tool as {@code {"type":"function","function": <tool as the openai package dumps
 * it: name, parameters, strict, type, description>}}, none when {@code tool_choice} is {@code
 * "none"}. With a {@code previous_response_id} the engine prepends the stored conversation, which
 * the router does not hold: it renders the new part only, and the pin decides the replica.
 */
public final class ResponsesRequests {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  public ResponsesRequests() {}

  public InferenceRequest responses(ObjectNode body, String model, boolean stream) {
    int maxTokens = RequestValidator.maxTokens(body, "max_output_tokens", false);
    ArrayNode messages = F.arrayNode();
    JsonNode instructions = body.get("instructions");
    if (instructions != null && !instructions.isNull()) {
      if (!instructions.isTextual()) {
        throw fail("'instructions' must be a string.", "instructions");
      }
      if (!instructions.asText().isEmpty()) {
        messages.addObject().put("role", "system").put("content", instructions.asText());
      }
    }
    JsonNode input = body.get("input");
    if (input == null || input.isNull()) {
      throw fail("'input' is required.", "input");
    }
    if (input.isTextual()) {
      messages.addObject().put("role", "user").put("content", input.asText());
    } else if (input.isArray()) {
      for (int i = 0; i < input.size(); i++) {
        JsonNode m = item(input.get(i), "input[" + i + "]");
        if (m != null) {
          messages.add(m);
        }
      }
    } else {
      throw fail("'input' must be a string or an array of input items.", "input");
    }
    if (messages.isEmpty()) {
      throw fail("'input' must not be empty.", "input");
    }
    ObjectNode engineBody = body.deepCopy();
    String pinned = null;
    String session = RequestValidator.openAiSessionKey(body);
    JsonNode previous = body.get("previous_response_id");
    if (previous != null && !previous.isNull()) {
      if (!previous.isTextual()) {
        throw fail("'previous_response_id' must be a string.", "previous_response_id");
      }
      ResponseIds.Issued issued = ResponseIds.decode(previous.asText());
      if (issued != null) {
        engineBody.put("previous_response_id", issued.engineId());
        pinned = issued.replicaId();
        if (session == null) {
          // A response continues the program of the response it follows.
          session = issued.program();
        }
      }
    }
    return new InferenceRequest(
        Endpoint.RESPONSES,
        model,
        stream,
        maxTokens,
        null,
        null,
        TemplateInputs.messages(RequestValidator.toMaps(messages)),
        tools(body),
        Map.of(),
        engineBody,
        body,
        session,
        pinned,
        null);
  }

  private static JsonNode item(JsonNode item, String where) {
    if (!item.isObject()) {
      throw fail("'" + where + "' must be an object.", where);
    }
    String type = item.path("type").asText("message");
    switch (type) {
      case "function_call" -> {
        ObjectNode m = F.objectNode().put("role", "assistant");
        ObjectNode call = m.putArray("tool_calls").addObject();
        call.put("id", item.path("call_id").asText());
        call.put("type", "function");
        call.putObject("function")
            .put("name", item.path("name").asText())
            .put("arguments", item.path("arguments").asText());
        return m;
      }
      case "function_call_output" -> {
        return F.objectNode()
            .put("role", "tool")
            .put("content", item.path("output").asText())
            .put("tool_call_id", item.path("call_id").asText());
      }
      case "message" -> {
        if (!item.path("role").isTextual()) {
          throw fail("'" + where + ".role' is required.", where + ".role");
        }
        ObjectNode m = F.objectNode().put("role", item.get("role").asText());
        JsonNode content = item.get("content");
        if (content != null && content.isArray()) {
          if ("assistant".equals(item.get("role").asText()) && item.has("id")) {
            m.put("content", content.path(0).path("text").asText());
            return m;
          }
          ArrayNode parts = m.putArray("content");
          for (JsonNode part : content) {
            String partType = part.path("type").asText();
            if (partType.equals("input_text") || partType.equals("output_text")) {
              parts.addObject().put("type", "text").put("text", part.path("text").asText());
            } else {
              parts.add(part);
            }
          }
        } else {
          m.set("content", content);
        }
        return m;
      }
      case "reasoning" -> {
        JsonNode summary = item.path("summary");
        String text =
            summary.size() == 1
                ? summary.get(0).path("text").asText()
                : item.path("content").path(0).path("text").asText("");
        return F.objectNode().put("role", "assistant").put("reasoning", text);
      }
      default -> {
        return null; // other items (built-in tool calls) render nothing the router can predict
      }
    }
  }

  private List<Map<String, Object>> tools(ObjectNode body) {
    JsonNode tools = body.get("tools");
    if (tools == null || tools.isNull() || "none".equals(body.path("tool_choice").asText())) {
      return null;
    }
    if (!tools.isArray()) {
      throw fail("'tools' must be an array.", "tools");
    }
    if (tools.isEmpty()) {
      return null;
    }
    List<Map<String, Object>> out = new ArrayList<>();
    for (JsonNode t : tools) {
      if (!t.isObject()) {
        throw fail("'tools' entries must be objects.", "tools");
      }
      Map<String, Object> given = RequestValidator.toMap(t);
      Map<String, Object> fn = new LinkedHashMap<>();
      fn.put("name", given.get("name"));
      fn.put("parameters", given.get("parameters"));
      fn.put("strict", given.get("strict"));
      fn.put("type", given.get("type"));
      fn.put("description", given.get("description"));
      given.forEach(fn::putIfAbsent);
      Map<String, Object> wrapped = new LinkedHashMap<>();
      wrapped.put("type", "function");
      wrapped.put("function", fn);
      out.add(wrapped);
    }
    return List.copyOf(out);
  }

  private static ApiException fail(String message, String param) {
    return new ApiException(ApiError.invalid(message, param, "invalid_value"));
  }
}
