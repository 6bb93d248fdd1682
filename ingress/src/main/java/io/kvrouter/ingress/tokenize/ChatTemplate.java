package io.kvrouter.ingress.tokenize;

import java.util.List;
import java.util.Map;

/**
 * Turns a chat conversation into the prompt text a model was trained on.
 *
 * <p>Messages are the parsed JSON of an OpenAI chat request: each a map with {@code role}, {@code
 * content} (a string), and where present {@code tool_calls}, {@code tool_call_id}, {@code
 * reasoning_content}, {@code name}. Values are plain Java: {@code String}, {@code Number}, {@code
 * Boolean}, {@code null}, {@code List}, {@code Map} (Jackson's {@code
 * ObjectMapper.convertValue(node, Map.class)} gives exactly this). Content may also be a list of
 * OpenAI content parts; see {@link ChatContent} for how it is turned into text.
 *
 * <p>Implementations are immutable and safe to call from many threads at once.
 */
public interface ChatTemplate {

  /**
   * Renders a conversation.
   *
   * @param messages the conversation, oldest first; not empty
   * @param tools tool definitions ({@code {"type":"function","function":{...}}}), or {@code null} /
   *     empty for none
   * @param addGenerationPrompt whether to end with the header that starts the assistant's turn
   * @param kwargs extra template variables ({@code chat_template_kwargs}, e.g. {@code
   *     enable_thinking}); may be empty or {@code null}
   * @return the prompt text; encode it without adding special tokens
   * @throws ChatTemplateException if the template rejects the conversation or fails
   */
  String render(
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs);

  /**
   * The text that starts every turn of the rendered prompt ({@code <|im_start|>} for ChatML), or
   * {@code null} when the template has none; {@link ChatPrefixCache} re-uses the tokens of earlier
   * turns only at such markers.
   */
  default String turnMarker() {
    return null;
  }
}
