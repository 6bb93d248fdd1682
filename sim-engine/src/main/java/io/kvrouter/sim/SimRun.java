package io.kvrouter.sim;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One generation on the real-time engine, read token by token by the HTTP thread that serves it:
 * each {@link #next()} says what the token adds to the answer, text or a piece of the tool call.
 * The first token is awaited in {@link #start}, so an engine error still becomes an HTTP error
 * before any response byte is written. Not thread-safe: one reader.
 */
final class SimRun {

  private static final long TIMEOUT_SECONDS = 600;

  /**
   * What one token adds.
   *
   * @param text decoded text (empty for a tool call's tokens)
   * @param call the tool call being written, or null
   * @param callIndex 0 for the call's header token, then one per arguments fragment
   * @param emission the engine's token (usage, finished)
   */
  record Delta(String text, SimToolCalls.Call call, int callIndex, Emission emission) {

    /** The arguments text this token adds to the call. */
    String arguments() {
      return call == null ? "" : call.fragment(callIndex);
    }
  }

  private final RealTimeEngine engine;
  private final String id;
  private final GenerationRequest request;
  private final SimTokenizer tokenizer;
  private final LinkedBlockingQueue<Object> queue;
  private Object pending;
  private final Emission first;
  private final StringBuilder text = new StringBuilder();
  private final StringBuilder arguments = new StringBuilder();
  private Emission last;

  private SimRun(
      RealTimeEngine engine,
      String id,
      GenerationRequest request,
      SimTokenizer tokenizer,
      LinkedBlockingQueue<Object> queue,
      Object first) {
    this.engine = engine;
    this.id = id;
    this.request = request;
    this.tokenizer = tokenizer;
    this.queue = queue;
    this.pending = first;
    this.first = (Emission) first;
  }

  /** The first token (its usage says how much of the prompt was cached). */
  Emission first() {
    return first;
  }

  /** Submits the request and waits for its first token; a failure is a 400 naming the prompt. */
  static SimRun start(
      RealTimeEngine engine, String id, GenerationRequest request, SimTokenizer tokenizer)
      throws InterruptedException {
    return start(engine, id, request, null, tokenizer, false);
  }

  /**
   * The same with the LoRA adapter {@code loraName} (null: the base model), for a prompt whose KV
   * was transferred from a prefill engine when {@code remote}.
   */
  static SimRun start(
      RealTimeEngine engine,
      String id,
      GenerationRequest request,
      String loraName,
      SimTokenizer tokenizer,
      boolean remote)
      throws InterruptedException {
    LinkedBlockingQueue<Object> q = new LinkedBlockingQueue<>();
    engine.submit(
        new SimRequest(
            id,
            request.prompt(),
            request.generated(),
            loraName,
            request.cacheSalt(),
            request.media(),
            tokenizer.answerTokens()),
        new RealTimeEngine.RequestListener() {
          @Override
          public void onToken(Emission e) {
            q.add(e);
          }

          @Override
          public void onError(String message) {
            q.add(message);
          }
        },
        remote);
    Object first = q.poll(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    if (first instanceof String || first == null) {
      engine.abort(id);
      throw SimApiError.badRequest(first == null ? "timed out" : (String) first, "prompt");
    }
    return new SimRun(engine, id, request, tokenizer, q, first);
  }

  /**
   * The next token's delta, or null once the last one was read.
   *
   * @throws SimApiError (500) when the engine failed mid-generation
   */
  Delta next() throws InterruptedException {
    if (last != null && last.finished()) {
      return null;
    }
    Object item = pending != null ? pending : queue.poll(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    pending = null;
    if (!(item instanceof Emission e)) {
      engine.abort(id);
      throw new SimApiError(500, "InternalServerError", "engine failed: " + item, null);
    }
    last = e;
    Delta d;
    if (request.toolCall() != null) {
      d = new Delta("", request.toolCall(), e.index(), e);
      arguments.append(d.arguments());
    } else {
      d = new Delta(tokenizer.decode(new int[] {e.tokenId()}), null, 0, e);
      text.append(d.text());
    }
    return d;
  }

  /** Reads to the end (a whole, non-streamed answer). */
  SimRun drain() throws InterruptedException {
    while (next() != null) {
      // accumulating
    }
    return this;
  }

  /** Stops the generation (the client went away). */
  void abort() {
    engine.abort(id);
  }

  /** The text generated so far. */
  String text() {
    return text.toString();
  }

  /** The tool call as written so far (its arguments possibly cut short), or null. */
  SimToolCalls.Call call() {
    SimToolCalls.Call c = request.toolCall();
    return c == null ? null : new SimToolCalls.Call(c.id(), c.name(), arguments.toString());
  }

  /** The last token read. */
  Emission last() {
    return last;
  }

  /** OpenAI's finish reason: {@code tool_calls} once a call is complete, else {@code length}. */
  String finishReason() {
    SimToolCalls.Call c = request.toolCall();
    return c != null && last.index() + 1 >= c.tokens() ? "tool_calls" : "length";
  }
}
