package io.kvrouter.loadtest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.function.LongSupplier;

/**
 * Reads one streamed OpenAI response line by line (server-sent events) and turns it into a {@link
 * RequestOutcome}: the arrival time of each content chunk, the usage figures of the final usage
 * chunk, and how the stream ended.
 *
 * <p>Contract: the outcome future completes exactly once, with the first of: {@code [DONE]} (OK),
 * an error frame or malformed chunk, the end or failure of the body, {@link #timeOut()}, {@link
 * #failedBeforeResponse}. After completion the rest of the body is discarded. Lines follow the SSE
 * rules (W3C/WHATWG "server-sent events": {@code data:} lines accumulate until a blank line
 * dispatches the event, lines starting with {@code :} are comments, other fields are ignored). A
 * content chunk is a chunk whose choices carry non-empty {@code text} (completions) or {@code
 * delta.content} / {@code delta.reasoning_content} (chat); vLLM's first chat chunk carries only the
 * role and is not content.
 *
 * <p>Thread-safety: the HTTP client calls the {@link Flow.Subscriber} methods serially; the timeout
 * arrives from another thread; all of them synchronize on this object. Cost: one JSON parse per
 * event and one {@code long} per content chunk.
 */
final class SseStreamSubscriber implements Flow.Subscriber<String> {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final int MAX_ERROR_BODY = 300;

  private final int index;
  private final int target;
  private final String group;
  private final long intendedNanos;
  private final long sentNanos;
  private final LongSupplier clock;
  private final CompletableFuture<RequestOutcome> outcome = new CompletableFuture<>();

  private Flow.Subscription subscription;
  private int httpStatus;
  private final StringBuilder data = new StringBuilder();
  private final StringBuilder errorBody = new StringBuilder();
  private long[] chunks = new long[16];
  private int chunkCount;
  private int promptTokens = -1;
  private int completionTokens = -1;
  private int cachedTokens = -1;

  /**
   * @param clock nanoseconds since the start of the run
   */
  SseStreamSubscriber(
      int index, int target, String group, long intendedNanos, long sentNanos, LongSupplier clock) {
    this.index = index;
    this.target = target;
    this.group = group;
    this.intendedNanos = intendedNanos;
    this.sentNanos = sentNanos;
    this.clock = clock;
  }

  /** Completes once, when the request has ended one way or another. */
  CompletableFuture<RequestOutcome> outcome() {
    return outcome;
  }

  /** Called with the status line, before the body. */
  synchronized void responseStarted(int status) {
    this.httpStatus = status;
  }

  /** Whether a status line has arrived. */
  synchronized boolean hasResponse() {
    return httpStatus != 0;
  }

  /** The request timed out: ends the outcome with TIMEOUT (no-op if already ended). */
  synchronized void timeOut() {
    finish(RequestOutcome.Status.TIMEOUT, "no [DONE] within the request timeout");
  }

  /** The run was stopped: ends the outcome with CANCELLED (no-op if already ended). */
  synchronized void cancel() {
    finish(RequestOutcome.Status.CANCELLED, "the run was stopped");
  }

  /**
   * The request failed before any response arrived (connection refused, reset, bad body; a
   * client-side HTTP timeout counts as TIMEOUT).
   */
  synchronized void failedBeforeResponse(Throwable t) {
    if (isTimeout(t)) {
      finish(RequestOutcome.Status.TIMEOUT, describe(t));
    } else if (httpStatus != 0) {
      onError(t);
    } else {
      finish(RequestOutcome.Status.SEND_ERROR, describe(t));
    }
  }

  @Override
  public synchronized void onSubscribe(Flow.Subscription s) {
    subscription = s;
    if (outcome.isDone()) {
      s.cancel();
    } else {
      s.request(Long.MAX_VALUE);
    }
  }

  @Override
  public synchronized void onNext(String line) {
    if (outcome.isDone()) {
      return;
    }
    if (httpStatus != 200) {
      if (errorBody.length() < MAX_ERROR_BODY) {
        errorBody.append(line, 0, Math.min(line.length(), MAX_ERROR_BODY - errorBody.length()));
      }
      return;
    }
    if (line.isEmpty()) {
      dispatch();
    } else if (line.startsWith("data:")) {
      if (data.length() > 0) {
        data.append('\n');
      }
      int from = line.startsWith("data: ") ? 6 : 5;
      data.append(line, from, line.length());
    }
    // comments (":...") and other fields (event:, id:, retry:) carry nothing we measure
  }

  @Override
  public synchronized void onError(Throwable t) {
    if (httpStatus != 0 && httpStatus != 200) {
      finish(RequestOutcome.Status.HTTP_ERROR, "HTTP " + httpStatus + " then " + describe(t));
    } else {
      finish(RequestOutcome.Status.STREAM_ERROR, "stream broke: " + describe(t));
    }
  }

  @Override
  public synchronized void onComplete() {
    if (outcome.isDone()) {
      return;
    }
    if (httpStatus != 200) {
      finish(RequestOutcome.Status.HTTP_ERROR, "HTTP " + httpStatus + ": " + errorBody);
      return;
    }
    dispatch(); // a final event without the blank line
    if (!outcome.isDone()) {
      finish(
          RequestOutcome.Status.STREAM_ERROR,
          "stream ended before [DONE] after " + chunkCount + " chunks");
    }
  }

  private void dispatch() {
    if (data.length() == 0 || outcome.isDone()) {
      return;
    }
    String event = data.toString();
    data.setLength(0);
    long now = clock.getAsLong();
    if (event.equals("[DONE]")) {
      finish(RequestOutcome.Status.OK, null);
      return;
    }
    JsonNode node;
    try {
      node = MAPPER.readTree(event);
    } catch (IOException e) {
      finish(RequestOutcome.Status.STREAM_ERROR, "malformed chunk: " + abbreviate(event));
      return;
    }
    if (node == null || !node.isObject()) {
      finish(RequestOutcome.Status.STREAM_ERROR, "malformed chunk: " + abbreviate(event));
      return;
    }
    JsonNode error = node.get("error");
    if (error != null && !error.isNull()) {
      JsonNode message = error.get("message");
      finish(
          RequestOutcome.Status.STREAM_ERROR,
          "error frame: " + abbreviate(message != null ? message.asText() : error.toString()));
      return;
    }
    if (hasContent(node.get("choices"))) {
      if (chunkCount == chunks.length) {
        chunks = java.util.Arrays.copyOf(chunks, chunkCount * 2);
      }
      chunks[chunkCount++] = now;
    }
    JsonNode usage = node.get("usage");
    if (usage != null && usage.isObject()) {
      promptTokens = intOr(usage.get("prompt_tokens"), promptTokens);
      completionTokens = intOr(usage.get("completion_tokens"), completionTokens);
      JsonNode details = usage.get("prompt_tokens_details");
      if (details != null && details.isObject()) {
        cachedTokens = intOr(details.get("cached_tokens"), cachedTokens);
      }
    }
  }

  private static boolean hasContent(JsonNode choices) {
    if (choices == null || !choices.isArray()) {
      return false;
    }
    for (JsonNode choice : choices) {
      if (nonEmpty(choice.get("text"))) {
        return true;
      }
      JsonNode delta = choice.get("delta");
      if (delta != null
          && (nonEmpty(delta.get("content"))
              || nonEmpty(delta.get("reasoning_content"))
              || nonEmpty(delta.get("reasoning")))) {
        return true;
      }
    }
    return false;
  }

  private static boolean nonEmpty(JsonNode n) {
    return n != null && n.isTextual() && !n.asText().isEmpty();
  }

  private static int intOr(JsonNode n, int fallback) {
    return n != null && n.isNumber() ? n.asInt() : fallback;
  }

  private void finish(RequestOutcome.Status status, String error) {
    if (outcome.isDone()) {
      return;
    }
    long end = clock.getAsLong();
    long[] times = java.util.Arrays.copyOf(chunks, chunkCount);
    outcome.complete(
        new RequestOutcome(
            index,
            target,
            group,
            status,
            httpStatus,
            error,
            intendedNanos,
            sentNanos,
            end,
            times,
            promptTokens,
            completionTokens,
            cachedTokens));
    if (status != RequestOutcome.Status.OK && subscription != null) {
      subscription.cancel();
    }
  }

  private static boolean isTimeout(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof java.net.http.HttpTimeoutException) {
        return true;
      }
    }
    return false;
  }

  /** The first exception below the future wrappers, with its root cause when that differs. */
  static String describe(Throwable t) {
    Throwable top = t;
    while ((top instanceof java.util.concurrent.CompletionException
            || top instanceof java.util.concurrent.ExecutionException)
        && top.getCause() != null) {
      top = top.getCause();
    }
    Throwable root = top;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    StringBuilder sb = new StringBuilder(top.getClass().getSimpleName());
    if (top.getMessage() != null) {
      sb.append(": ").append(abbreviate(top.getMessage()));
    }
    if (root != top) {
      sb.append(" (").append(root.getClass().getSimpleName());
      if (root.getMessage() != null) {
        sb.append(": ").append(abbreviate(root.getMessage()));
      }
      sb.append(')');
    }
    return sb.toString();
  }

  private static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }
}
