package io.kvrouter.ingress.tokenize;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A Hugging Face chat template (the Jinja source of {@code chat_template} in {@code
 * tokenizer_config.json}) rendered with jinjava through the Python compatibility layer ({@link
 * HfJinjava}, {@link JinjaSourceRewriter}), so the output matches Python jinja2 as transformers
 * runs it, byte for byte.
 *
 * <p>Variables, as in transformers' {@code apply_chat_template}: {@code messages}, {@code tools}
 * (absent when there are none), {@code add_generation_prompt}, the tokenizer's special tokens
 * ({@code bos_token}, {@code eos_token}, ...), then the caller's {@code kwargs}, which win on a
 * clash.
 *
 * <p>Content given as a list of parts is flattened to text first ({@link ChatContent}), unless the
 * template loops over the parts itself, as vLLM decides.
 *
 * <p>Thread-safe: the template source is rewritten once at construction; each render parses it
 * again in a fresh jinjava interpreter (about 0.1-1 ms for a typical template, linear in
 * conversation length).
 */
public final class JinjaChatTemplate implements ChatTemplate {

  private static final Jinjava ENGINE = HfJinjava.create();

  private final String source;
  private final Map<String, Object> specialTokens;
  private final boolean flattenContent;

  /**
   * Prepares a template.
   *
   * @param templateSource Jinja source as shipped with the model
   * @param specialTokens variables such as {@code bos_token}; copied
   * @throws IllegalArgumentException if the source has an unclosed tag, string or bracket
   */
  public JinjaChatTemplate(String templateSource, Map<String, Object> specialTokens) {
    this.source = JinjaSourceRewriter.rewrite(Objects.requireNonNull(templateSource, "template"));
    this.specialTokens = Map.copyOf(specialTokens);
    this.flattenContent = !ChatContent.templateLoopsOverContent(templateSource);
  }

  @Override
  public String render(
      List<Map<String, Object>> messages,
      List<Map<String, Object>> tools,
      boolean addGenerationPrompt,
      Map<String, Object> kwargs) {
    if (messages == null || messages.isEmpty()) {
      throw new ChatTemplateException("messages must not be empty");
    }
    Map<String, Object> context = new HashMap<>(specialTokens);
    context.put("messages", flattenContent ? ChatContent.flattenText(messages) : messages);
    if (tools != null && !tools.isEmpty()) {
      context.put("tools", tools);
    }
    context.put("add_generation_prompt", addGenerationPrompt);
    if (kwargs != null) {
      context.putAll(kwargs);
    }
    RenderResult result;
    try {
      result = ENGINE.renderForResult(source, context);
    } catch (ChatTemplateException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new ChatTemplateException("chat template failed: " + e.getMessage(), e);
    }
    List<TemplateError> fatal =
        result.getErrors().stream()
            .filter(e -> e.getSeverity() == TemplateError.ErrorType.FATAL)
            .collect(Collectors.toList());
    if (!fatal.isEmpty()) {
      for (TemplateError e : fatal) {
        ChatTemplateException raised = raisedBy(e.getException());
        if (raised != null) {
          throw raised;
        }
      }
      throw new ChatTemplateException(
          "chat template failed: "
              + fatal.stream()
                  .map(e -> e.getMessage() + " (line " + e.getLineno() + ")")
                  .collect(Collectors.joining("; ")));
    }
    return result.getOutput();
  }

  private static ChatTemplateException raisedBy(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ChatTemplateException cte) {
        return cte;
      }
    }
    return null;
  }

  /** {@code <|im_start|>} when the template writes ChatML turns (Qwen, many others), else null. */
  @Override
  public String turnMarker() {
    return source.contains(IM_START) ? IM_START : null;
  }

  private static final String IM_START = "<|im_start|>";

  /** The template source after the compatibility rewrite; for diagnostics. */
  String rewrittenSource() {
    return source;
  }
}
