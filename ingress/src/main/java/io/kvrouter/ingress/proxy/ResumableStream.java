package io.kvrouter.ingress.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.Sse;

/**
 * The client's view of one OpenAI chat or completions stream that several engines may serve in
 * turn: what has been said so far, whether it is over, and how the events of an engine that took
 * over are rewritten so that the client sees one stream. An engine's own error event mid-answer is
 * held back: it means the same as a cut.
 *
 * <p>Events are {@code data:} lines ended by a blank line ({@code \n\n}, as vLLM writes them). Per
 * event of the engine serving now ({@link #relay}): the text of choice 0 is kept, a tool call delta
 * and a finish reason are noted, {@code [DONE]} ends the stream. Events of a later engine ({@link
 * #resumed}) carry the first engine's {@code id} and {@code created}, lose the {@code role} of
 * their first delta (the client had it), and their usage counts the whole answer: the later engine
 * saw the tokens already generated as prompt, so they move from {@code prompt_tokens} to {@code
 * completion_tokens}.
 *
 * <p>Cost: one JSON parse per event (an event carries one token or a few), a serialisation for each
 * rewritten one. Not thread-safe: a stream's events arrive in order, one at a time.
 */
final class ResumableStream {

  private final ObjectMapper mapper;
  private final StringBuilder text = new StringBuilder();
  private String id;
  private JsonNode created;
  private boolean resumed;
  private int tokensBefore;
  private boolean finished;
  private boolean done;
  private boolean toolCall;
  private boolean otherChoices;
  private String engineError;

  ResumableStream(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /**
   * The event to send the client for one SSE event of the engine serving now ({@code event} without
   * its blank-line delimiter); empty when the client must not see it.
   */
  String relay(String event) {
    String data = Sse.data(event);
    if (data == null) {
      return event + "\n\n";
    }
    if (Sse.DONE.equals(data.trim())) {
      done = true;
      return event + "\n\n";
    }
    JsonNode chunk = Sse.parse(mapper, data);
    if (!(chunk instanceof ObjectNode node)) {
      // Half an event, its engine cut off while writing it: the client must not see it.
      return "";
    }
    if (node.has("error")) {
      // The engine gave up mid-answer (vLLM says so when its engine core dies): held back, since
      // another engine may finish the answer; the client gets it if none does.
      engineError = event + "\n\n";
      return "";
    }
    boolean rewrite = false;
    if (!resumed) {
      if (id == null && node.path("id").isTextual()) {
        id = node.get("id").asText();
        created = node.get("created");
      }
    } else {
      rewrite = true;
      if (id != null) {
        node.put("id", id);
      }
      if (created != null) {
        node.set("created", created);
      }
    }
    for (JsonNode choice : node.path("choices")) {
      if (choice.path("index").asInt(0) != 0) {
        otherChoices = true;
        continue;
      }
      JsonNode delta = choice.get("delta");
      if (delta instanceof ObjectNode d) {
        if (d.path("tool_calls").size() > 0) {
          toolCall = true;
        }
        text.append(d.path("content").asText(""));
        if (resumed && d.has("role")) {
          d.remove("role");
          if (d.path("content").asText("").isEmpty()
              && d.size() <= 1
              && choice.path("finish_reason").isNull()) {
            // The new engine's opening event says only who speaks: the client knows.
            return "";
          }
        }
      } else {
        text.append(choice.path("text").asText(""));
      }
      if (!choice.path("finish_reason").isMissingNode() && !choice.get("finish_reason").isNull()) {
        finished = true;
      }
    }
    if (resumed && node.get("usage") instanceof ObjectNode usage) {
      wholeAnswer(usage);
    }
    return rewrite ? Sse.frame(node.toString()) : event + "\n\n";
  }

  /** Moves the tokens generated before the current engine from its prompt to its completion. */
  private void wholeAnswer(ObjectNode usage) {
    if (!usage.path("prompt_tokens").isNumber() || !usage.path("completion_tokens").isNumber()) {
      return;
    }
    int prompt = Math.max(0, usage.get("prompt_tokens").asInt() - tokensBefore);
    usage.put("prompt_tokens", prompt);
    usage.put("completion_tokens", usage.get("completion_tokens").asInt() + tokensBefore);
    if (usage.get("prompt_tokens_details") instanceof ObjectNode details
        && details.path("cached_tokens").isNumber()) {
      details.put("cached_tokens", Math.min(prompt, details.get("cached_tokens").asInt()));
    }
  }

  /**
   * Another engine takes over; it was sent the prompt followed by {@code generatedTokens} tokens of
   * the answer so far.
   */
  void resumed(int generatedTokens) {
    resumed = true;
    done = false;
    engineError = null;
    tokensBefore = generatedTokens;
  }

  /** The answer's text so far (choice 0). */
  String text() {
    return text.toString();
  }

  /** True once the stream ended ({@code [DONE]}). */
  boolean done() {
    return done && engineError == null;
  }

  /**
   * The error event the engine serving now ended its answer with (not relayed), or null. Cleared
   * when another engine takes over.
   */
  String engineError() {
    return engineError;
  }

  /** True once choice 0 has a finish reason: its text is complete even if the stream is not. */
  boolean finished() {
    return finished;
  }

  /** True once the answer began a tool call, which no other engine's parser could pick up. */
  boolean toolCall() {
    return toolCall;
  }

  /** True when the stream carries more than one choice ({@code n} > 1). */
  boolean otherChoices() {
    return otherChoices;
  }
}
