package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * Validates an Anthropic Messages API request ({@code POST /v1/messages}, or its {@code
 * count_tokens}) and translates it into an OpenAI chat completion request, or throws {@link
 * ApiException} with a 400 whose message starts with the offending field's path as Anthropic writes
 * it ({@code messages.1.content.0.type: ...}).
 *
 * <p>The translation is vLLM's own ({@code vllm/entrypoints/anthropic/serving.py}, {@code
 * AnthropicServingMessages._convert_anthropic_to_openai_request}), so the prompt the router renders
 * is the one a vLLM serving {@code /v1/messages} itself renders, and an engine spoken to in chat
 * sees the same conversation: {@code system} (a string, or text blocks joined with nothing between
 * them, Claude Code's per-request {@code x-anthropic-billing-header} block skipped) becomes the
 * first message; text blocks become content parts (a single text part a plain string), {@code
 * image} blocks {@code image_url} parts (base64 sources as {@code data:} URLs), {@code thinking}
 * the assistant's {@code reasoning} ({@code redacted_thinking} is dropped), {@code tool_use} the
 * assistant's {@code tool_calls} (arguments the JSON of {@code input}), and a user's {@code
 * tool_result} a {@code tool} message ahead of the rest of that turn (text blocks joined with
 * {@code "\n"}, its images a following user message); {@code tools} become functions ({@code
 * input_schema} as {@code parameters}), {@code tool_choice} {@code auto}/{@code any}/{@code
 * tool}/{@code none} becomes {@code auto}/{@code required}/the named function/{@code none} ({@code
 * auto} when tools come without one), {@code stop_sequences} {@code stop}, {@code
 * output_config.format} a JSON-schema {@code response_format}; {@code temperature}, {@code top_p},
 * {@code top_k} pass as they are. {@code metadata.user_id} is the request's session key.
 *
 * <p>Refused, with the reason in the message: blocks and tools that need Anthropic's servers
 * (documents, search results, server tools such as web search or code execution, {@code
 * mcp_servers}, {@code container}, {@code context_management}) and image sources other than base64
 * and URL. Accepted and not forwarded: {@code thinking} (vLLM ignores it as well), {@code
 * cache_control} marks (the engine caches every prefix), {@code service_tier}.
 */
public final class AnthropicRequests {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  /** Top-level fields that ask for something only Anthropic's platform provides. */
  private static final List<String> PLATFORM_ONLY =
      List.of("mcp_servers", "container", "context_management");

  public AnthropicRequests() {}

  /** A {@code POST /v1/messages} body. */
  public InferenceRequest messages(ObjectNode body, String model, boolean stream) {
    int maxTokens = RequestValidator.maxTokens(body, "max_tokens", true);
    ObjectNode chat = translate(body, model);
    chat.put("max_tokens", maxTokens);
    chat.put("stream", stream);
    if (stream) {
      chat.putObject("stream_options").put("include_usage", true);
    }
    for (String passthrough : List.of("temperature", "top_p", "top_k")) {
      JsonNode v = body.get(passthrough);
      if (v != null && !v.isNull()) {
        if (!v.isNumber()) {
          throw fail(passthrough, "Input should be a valid number");
        }
        chat.set(passthrough, v);
      }
    }
    JsonNode stops = body.get("stop_sequences");
    if (stops != null && !stops.isNull()) {
      if (!stops.isArray()) {
        throw fail("stop_sequences", "Input should be a valid list");
      }
      for (int i = 0; i < stops.size(); i++) {
        if (!stops.get(i).isTextual()) {
          throw fail("stop_sequences." + i, "Input should be a valid string");
        }
      }
      chat.set("stop", stops);
    }
    JsonNode format = body.path("output_config").path("format");
    if (format.isObject() && format.has("schema")) {
      ObjectNode rf = chat.putObject("response_format").put("type", "json_schema");
      rf.putObject("json_schema").put("name", "json_schema").set("schema", format.get("schema"));
    }
    return request(Endpoint.MESSAGES, model, stream, maxTokens, body, chat);
  }

  /** A {@code POST /v1/messages/count_tokens} body: the same conversation, nothing to generate. */
  public InferenceRequest countTokens(ObjectNode body, String model) {
    return request(Endpoint.COUNT_TOKENS, model, false, 0, body, translate(body, model));
  }

  private InferenceRequest request(
      Endpoint endpoint,
      String model,
      boolean stream,
      int maxTokens,
      ObjectNode body,
      ObjectNode chat) {
    List<Map<String, Object>> messages = RequestValidator.toMaps(chat.get("messages"));
    List<Map<String, Object>> tools =
        chat.has("tools") ? RequestValidator.toMaps(chat.get("tools")) : null;
    Map<String, Object> kwargs = RequestValidator.templateKwargs(body);
    if (!kwargs.isEmpty()) {
      chat.set("chat_template_kwargs", body.get("chat_template_kwargs"));
    }
    return new InferenceRequest(
        endpoint,
        model,
        stream,
        maxTokens,
        null,
        null,
        TemplateInputs.messages(messages),
        TemplateInputs.tools(tools),
        kwargs,
        chat,
        body,
        sessionKey(body),
        null,
        null);
  }

  private static String sessionKey(ObjectNode body) {
    JsonNode metadata = body.get("metadata");
    if (metadata == null || metadata.isNull()) {
      return null;
    }
    if (!metadata.isObject()) {
      throw fail("metadata", "Input should be a valid dictionary");
    }
    JsonNode user = metadata.get("user_id");
    if (user == null || user.isNull()) {
      return null;
    }
    if (!user.isTextual()) {
      throw fail("metadata.user_id", "Input should be a valid string");
    }
    return user.asText().isEmpty() ? null : user.asText();
  }

  /** The OpenAI chat body of an Anthropic request (messages, tools, tool choice). */
  private ObjectNode translate(ObjectNode body, String model) {
    for (String field : PLATFORM_ONLY) {
      JsonNode v = body.get(field);
      if (v != null && !v.isNull()) {
        throw fail(field, "is not supported: it needs Anthropic's own servers");
      }
    }
    ObjectNode chat = F.objectNode();
    chat.put("model", model);
    ArrayNode messages = chat.putArray("messages");
    String system = system(body.get("system"));
    if (!system.isEmpty()) {
      messages.addObject().put("role", "system").put("content", system);
    }
    JsonNode in = body.get("messages");
    if (in == null || in.isNull()) {
      throw fail("messages", "Field required");
    }
    if (!in.isArray()) {
      throw fail("messages", "Input should be a valid list");
    }
    if (in.isEmpty()) {
      throw fail("messages", "List should have at least 1 item");
    }
    for (int i = 0; i < in.size(); i++) {
      message(in.get(i), "messages." + i, messages);
    }
    if (messages.isEmpty()) {
      throw fail("messages", "the conversation has nothing to render");
    }
    JsonNode tools = body.get("tools");
    if (tools != null && !tools.isNull()) {
      chat.set("tools", AnthropicBlocks.tools(tools));
    }
    JsonNode choice = body.get("tool_choice");
    if (choice != null && !choice.isNull()) {
      AnthropicBlocks.toolChoice(choice, chat);
    } else if (chat.has("tools")) {
      chat.put("tool_choice", "auto");
    }
    return chat;
  }

  private static String system(JsonNode system) {
    if (system == null || system.isNull()) {
      return "";
    }
    if (system.isTextual()) {
      return system.asText();
    }
    if (!system.isArray()) {
      throw fail("system", "Input should be a valid string or a list of text blocks");
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < system.size(); i++) {
      JsonNode block = system.get(i);
      String where = "system." + i;
      if (!block.isObject() || !"text".equals(block.path("type").asText())) {
        throw fail(where + ".type", "system blocks must be text blocks");
      }
      if (!block.path("text").isTextual()) {
        throw fail(where + ".text", "Field required");
      }
      String text = block.get("text").asText();
      if (!text.startsWith("x-anthropic-billing-header")) {
        sb.append(text);
      }
    }
    return sb.toString();
  }

  private void message(JsonNode m, String where, ArrayNode out) {
    if (!m.isObject()) {
      throw fail(where, "Input should be a valid dictionary");
    }
    JsonNode roleNode = m.get("role");
    if (roleNode == null || !roleNode.isTextual()) {
      throw fail(where + ".role", "Field required");
    }
    String role = roleNode.asText();
    if (!role.equals("user") && !role.equals("assistant")) {
      throw fail(where + ".role", "Input should be 'user' or 'assistant'");
    }
    JsonNode content = m.get("content");
    if (content == null || content.isNull()) {
      throw fail(where + ".content", "Field required");
    }
    ObjectNode msg = F.objectNode().put("role", role);
    if (content.isTextual()) {
      msg.put("content", content.asText());
      out.add(msg);
      return;
    }
    if (!content.isArray()) {
      throw fail(where + ".content", "Input should be a valid string or a list of content blocks");
    }
    ArrayNode parts = F.arrayNode();
    ArrayNode calls = F.arrayNode();
    StringBuilder reasoning = new StringBuilder();
    for (int i = 0; i < content.size(); i++) {
      JsonNode block = content.get(i);
      String at = where + ".content." + i;
      String type = AnthropicBlocks.type(block, at);
      switch (type) {
        case "text" -> {
          if (!block.path("text").isTextual()) {
            throw fail(at + ".text", "Field required");
          }
          if (!block.get("text").asText().isEmpty()) {
            parts.addObject().put("type", "text").put("text", block.get("text").asText());
          }
        }
        case "image" -> parts.add(AnthropicBlocks.image(block.path("source"), at + ".source"));
        case "thinking" -> {
          if (!block.path("thinking").isTextual()) {
            throw fail(at + ".thinking", "Field required");
          }
          reasoning.append(block.get("thinking").asText());
        }
        case "tool_use" -> calls.add(AnthropicBlocks.toolUse(block, at, role));
        case "tool_result" -> AnthropicBlocks.toolResult(block, at, role, out, parts);
        default -> {
          // redacted_thinking: opaque, nothing to render (vLLM drops it too)
        }
      }
    }
    if (reasoning.length() > 0) {
      msg.put("reasoning", reasoning.toString());
    }
    if (!calls.isEmpty()) {
      msg.set("tool_calls", calls);
    }
    if (parts.size() == 1 && "text".equals(parts.get(0).path("type").asText())) {
      msg.put("content", parts.get(0).path("text").asText());
    } else if (!parts.isEmpty()) {
      msg.set("content", parts);
    }
    boolean hasSomething = msg.has("content") || msg.has("tool_calls") || msg.has("reasoning");
    if (hasSomething && !(role.equals("user") && !msg.has("content"))) {
      out.add(msg);
    }
  }

  static ApiException fail(String path, String what) {
    return new ApiException(ApiError.invalid(path + ": " + what, path, "invalid_request_error"));
  }
}
