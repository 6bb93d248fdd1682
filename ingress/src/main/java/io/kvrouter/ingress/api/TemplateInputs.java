package io.kvrouter.ingress.api;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The conversation and tools exactly as vLLM hands them to the chat template, so the router renders
 * (and hashes) the prompt the engine will run. Chat requests are validated by vLLM into its models
 * and handed on reconstructed; three differences reach the rendered text:
 *
 * <ul>
 *   <li><b>Tools</b> become {@code tool.model_dump()} of {@code ChatCompletionToolsParam}: {@code
 *       type} first, then {@code function} with {@code name}, {@code description} and {@code
 *       parameters} (each {@code null} when absent), then any extra keys in the order sent (vLLM's
 *       models allow extras) (vllm-project/vllm {@code vllm/entrypoints/openai/engine/protocol.py}
 *       {@code FunctionDefinition}, {@code chat_completion/serving.py}).
 *   <li><b>Messages</b> are rebuilt from {@code role} and {@code content} ({@code null} becoming
 *       empty text, as for templates of vLLM's "string" content format), plus an assistant's {@code
 *       tool_calls} and {@code reasoning} (copied to {@code reasoning_content} too, "keep
 *       compatibility"; a {@code reasoning_content} sent alone is not read), a tool message's
 *       {@code tool_call_id}, and a string {@code name}; other keys are dropped ({@code
 *       vllm/entrypoints/chat_utils.py} {@code _parse_chat_message_content}).
 *   <li><b>Tool-call arguments</b>, a JSON string in OpenAI's format, are parsed into an object as
 *       templates expect; unparsable or non-object arguments become {@code {}} and an empty {@code
 *       tool_calls} list is dropped ({@code _postprocess_messages}).
 * </ul>
 *
 * <p>Stateless; inputs are never modified. Cost linear in the size of the conversation.
 */
public final class TemplateInputs {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> FUNCTION_FIELDS = Set.of("name", "description", "parameters");

  private TemplateInputs() {}

  /** Tool definitions as vLLM renders them, or null for none. */
  public static List<Map<String, Object>> tools(List<Map<String, Object>> tools) {
    if (tools == null) {
      return null;
    }
    List<Map<String, Object>> out = new ArrayList<>(tools.size());
    for (Map<String, Object> tool : tools) {
      Map<String, Object> dumped = new LinkedHashMap<>();
      dumped.put("type", "function");
      Map<String, Object> fn = new LinkedHashMap<>();
      Map<?, ?> given = tool.get("function") instanceof Map<?, ?> m ? m : Map.of();
      fn.put("name", given.get("name"));
      fn.put("description", given.get("description"));
      fn.put("parameters", given.get("parameters"));
      for (Map.Entry<?, ?> e : given.entrySet()) {
        if (!FUNCTION_FIELDS.contains(e.getKey().toString())) {
          fn.put(e.getKey().toString(), e.getValue());
        }
      }
      dumped.put("function", fn);
      for (Map.Entry<String, Object> e : tool.entrySet()) {
        if (!e.getKey().equals("type") && !e.getKey().equals("function")) {
          dumped.put(e.getKey(), e.getValue());
        }
      }
      out.add(dumped);
    }
    return List.copyOf(out);
  }

  /** Messages as vLLM rebuilds them for the template. */
  public static List<Map<String, Object>> messages(List<Map<String, Object>> messages) {
    List<Map<String, Object>> out = new ArrayList<>(messages.size());
    for (Map<String, Object> m : messages) {
      Object role = m.get("role");
      Map<String, Object> msg = new LinkedHashMap<>();
      msg.put("role", role);
      // vLLM renders absent content as no text ("string" content format, the common one).
      msg.put("content", m.get("content") == null ? "" : m.get("content"));
      if ("assistant".equals(role)) {
        if (m.get("tool_calls") instanceof List<?> calls && !calls.isEmpty()) {
          msg.put("tool_calls", parsedCalls(calls));
        }
        if (m.get("reasoning") != null) {
          msg.put("reasoning", m.get("reasoning"));
          msg.put("reasoning_content", m.get("reasoning"));
        }
      } else if ("tool".equals(role) && m.containsKey("tool_call_id")) {
        msg.put("tool_call_id", m.get("tool_call_id"));
      }
      if (m.get("name") instanceof String name) {
        msg.put("name", name);
      }
      out.add(msg);
    }
    return List.copyOf(out);
  }

  private static List<Object> parsedCalls(List<?> calls) {
    List<Object> out = new ArrayList<>(calls.size());
    for (Object call : calls) {
      if (!(call instanceof Map<?, ?> c) || !(c.get("function") instanceof Map<?, ?> fn)) {
        out.add(call);
        continue;
      }
      Map<String, Object> function = new LinkedHashMap<>();
      fn.forEach((k, v) -> function.put(k.toString(), v));
      function.put("arguments", arguments(fn.get("arguments")));
      Map<String, Object> copy = new LinkedHashMap<>();
      c.forEach((k, v) -> copy.put(k.toString(), v));
      copy.put("function", function);
      out.add(copy);
    }
    return out;
  }

  /** {@code arguments} as an object: parsed from JSON text, {@code {}} when that fails. */
  static Map<String, Object> arguments(Object arguments) {
    if (arguments instanceof Map<?, ?> m) {
      Map<String, Object> copy = new LinkedHashMap<>();
      m.forEach((k, v) -> copy.put(k.toString(), v));
      return copy;
    }
    if (arguments instanceof String s && !s.isEmpty()) {
      try {
        Object parsed = JSON.readValue(s, new TypeReference<Object>() {});
        if (parsed instanceof Map<?, ?>) {
          return arguments(parsed);
        }
      } catch (Exception malformed) {
        // as vLLM: a malformed history must not fail every later turn
      }
    }
    return new LinkedHashMap<>();
  }
}
