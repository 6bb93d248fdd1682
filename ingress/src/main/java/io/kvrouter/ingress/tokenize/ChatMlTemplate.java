package io.kvrouter.ingress.tokenize;

import java.util.List;
import java.util.Map;

/**
 * The plain ChatML format, used when a model configures no chat template (and by the demo model):
 * each message as {@code <|im_start|>role\ncontent<|im_end|>\n}, then {@code
 * <|im_start|>assistant\n} when a generation prompt is wanted. This is the layout of transformers'
 * former default template (ChatML, as introduced with OpenAI's ChatML document).
 *
 * <p>Content that is a list of OpenAI content parts contributes the text of its text parts, joined
 * with {@code "\n"} as vLLM does ({@link ChatContent#text}); {@code null} content is empty. Tools
 * and tool calls are written as JSON ({@link PythonJson}): tool definitions in a leading {@code
 * system} turn ({@code <tools>...</tools>}, one per line, after the first system message's
 * content), each tool call as {@code <tool_call>\n{json}\n</tool_call>} after the assistant's
 * content, so that different tools give different prompts. {@code kwargs} are ignored.
 *
 * <p>Stateless and thread-safe; cost is linear in the size of the conversation.
 */
public final class ChatMlTemplate implements ChatTemplate {

  /** The shared instance. */
  public static final ChatMlTemplate INSTANCE = new ChatMlTemplate();

  private ChatMlTemplate() {}

  /** Every turn starts with {@code <|im_start|>}. */
  @Override
  public String turnMarker() {
    return IM_START;
  }

  private static final String IM_START = "<|im_start|>";

  @Override
  public String render(
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs) {
    if (messages == null || messages.isEmpty()) {
      throw new ChatTemplateException("messages must not be empty");
    }
    StringBuilder sb = new StringBuilder(256);
    int first = 0;
    if (tools != null && !tools.isEmpty()) {
      sb.append("<|im_start|>system\n");
      if ("system".equals(messages.get(0).get("role"))) {
        sb.append(ChatContent.text(messages.get(0).get("content"))).append("\n\n");
        first = 1;
      }
      sb.append("<tools>");
      for (Map<String, Object> tool : tools) {
        sb.append('\n').append(PythonJson.dumps(tool, PythonJson.Options.DEFAULT));
      }
      sb.append("\n</tools><|im_end|>\n");
    }
    for (int i = first; i < messages.size(); i++) {
      Map<String, Object> m = messages.get(i);
      Object role = m.get("role");
      if (role == null) {
        throw new ChatTemplateException("message " + i + " has no role");
      }
      sb.append("<|im_start|>")
          .append(role)
          .append('\n')
          .append(ChatContent.text(m.get("content")));
      if (m.get("tool_calls") instanceof List<?> calls) {
        for (Object call : calls) {
          sb.append("\n<tool_call>\n")
              .append(PythonJson.dumps(call, PythonJson.Options.DEFAULT))
              .append("\n</tool_call>");
        }
      }
      sb.append("<|im_end|>\n");
    }
    if (addGenerationPrompt) {
      sb.append("<|im_start|>assistant\n");
    }
    return sb.toString();
  }
}
