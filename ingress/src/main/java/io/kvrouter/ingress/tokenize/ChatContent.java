package io.kvrouter.ingress.tokenize;

import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Message content in the two shapes OpenAI clients send it: a string, or a list of content parts
 * ({@code [{"type":"text","text":"..."}, {"type":"image_url",...}]}). Most chat templates expect a
 * string; vLLM flattens the text parts of such a list with {@code "\n"} between them before
 * rendering a string-content template, and passes the list through to templates that loop over the
 * parts ({@code vllm/entrypoints/chat_utils.py}, content format {@code "string"} versus {@code
 * "openai"}, detected from the template). kvrouter does the same so that its prompt, and therefore
 * its block keys, match the engine's.
 *
 * <p>Stateless and thread-safe; cost is linear in the size of the messages.
 */
public final class ChatContent {

  /**
   * A {@code for} loop over a message's content ({@code for part in message['content']}, {@code for
   * c in m.content}): such templates take the list of parts as it is. A textual approximation of
   * vLLM's AST check.
   */
  private static final Pattern LOOPS_OVER_CONTENT =
      Pattern.compile(
          "\\{%-?\\s*for\\s+\\w+\\s+in\\s+\\w+\\s*(?:\\.\\s*content|\\[\\s*['\"]content['\"]\\s*\\])"
              + "\\s*(?:-?%\\}|\\||if\\b)");

  private ChatContent() {}

  /**
   * The text of message content: a string as it is, {@code null} as empty, a list of parts as the
   * {@code text} of its text parts joined with {@code "\n"}, preceded by one {@link
   * MediaPrompt#MARKER} per {@code image_url} part as vLLM puts the model's image placeholder in
   * front ({@link MediaPrompt#flatten}; other parts dropped).
   */
  public static String text(Object content) {
    if (content == null) {
      return "";
    }
    if (content instanceof List<?> parts) {
      return MediaPrompt.flatten(parts);
    }
    return content.toString();
  }

  /**
   * Returns the messages with every list-of-parts {@code content} replaced by its {@link #text};
   * the list itself if no message needs it. Input maps are not modified.
   */
  public static List<Map<String, Object>> flattenText(List<Map<String, Object>> messages) {
    List<Map<String, Object>> out = null;
    for (int i = 0; i < messages.size(); i++) {
      Map<String, Object> m = messages.get(i);
      if (m.get("content") instanceof List<?>) {
        if (out == null) {
          out = new ArrayList<>(messages);
        }
        Map<String, Object> copy = new HashMap<>(m);
        copy.put("content", text(m.get("content")));
        out.set(i, copy);
      }
    }
    return out == null ? messages : out;
  }

  /** True if a chat template loops over content parts and so wants them unflattened. */
  static boolean templateLoopsOverContent(String templateSource) {
    return LOOPS_OVER_CONTENT.matcher(templateSource).find();
  }
}
