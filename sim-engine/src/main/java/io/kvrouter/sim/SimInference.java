package io.kvrouter.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The simulated engine's inference endpoints, each served as vLLM serves it: OpenAI completions and
 * chat completions, the Anthropic Messages API and its token count ({@link SimAnthropic}), the
 * OpenAI Responses API ({@link SimResponsesApi}). Anthropic and Responses requests are converted to
 * chat and generated as chat, as vLLM does. One call per request, on the HTTP thread that serves
 * it.
 */
final class SimInference {

  private final SimRanks ranks;
  private final SimKvTransfer transfer;
  private final SimKvHandshake handshake;
  private final String model;
  private final SimTokenizer tokenizer;
  private final SimResponsesApi responses;
  private final SimRequestLog log;
  private final SimAdapters adapters;
  private final MediaPrompt.Settings images;

  SimInference(
      SimRanks ranks,
      SimKvTransfer transfer,
      SimKvHandshake handshake,
      String model,
      SimTokenizer tokenizer,
      SimApis apis,
      SimRequestLog log,
      SimAdapters adapters,
      MediaPrompt.Settings images) {
    this.ranks = ranks;
    this.transfer = transfer;
    this.handshake = handshake;
    this.model = model;
    this.tokenizer = tokenizer;
    this.responses = new SimResponsesApi(apis.responsesStore());
    this.log = log;
    this.adapters = adapters;
    this.images = images;
  }

  /**
   * The LoRA adapter a request for {@code requested} runs with (null: the base model), as {@link
   * SimAdapters#loraOf} says; vLLM's 404 for a model it does not serve.
   */
  String checkModel(String requested) {
    return adapters.loraOf(requested);
  }

  /** The model name an answer carries: the adapter's when one ran it (as vLLM answers). */
  private String answered(String lora) {
    return lora == null ? model : lora;
  }

  /** How this engine expands and names images: its settings under its model's id. */
  private GenerationRequest.Media media() {
    return new GenerationRequest.Media(images, images.modelId(model));
  }

  /** An answer's {@code created}: the time its request arrived, in seconds (as vLLM stamps it). */
  private static long now() {
    return System.currentTimeMillis() / 1000;
  }

  /**
   * {@code /v1/completions} and {@code /v1/chat/completions}, on the rank the request names or the
   * least loaded one, with the prefill/decode handshake when the body carries one ({@link
   * SimKvHandshake}).
   */
  void openAi(HttpExchange ex, JsonNode body, boolean chat) throws Exception {
    long created = now();
    String id = SimIds.openAi(chat ? "chatcmpl-" : "cmpl-");
    GenerationRequest g =
        chat
            ? GenerationRequest.chat(body, tokenizer, SimIds.openAiToolCall(), media())
            : GenerationRequest.completion(body, tokenizer);
    String lora = checkModel(g.model());
    SimKvHandshake.Part part = SimKvHandshake.part(body);
    RealTimeEngine engine = ranks.pick(ex.getRequestHeaders());
    try {
      if (part == SimKvHandshake.Part.DECODE) {
        pull(engine, g);
      }
      SimRun run =
          start(ex, engine, id, g, lora, chat ? "/v1/chat/completions" : "/v1/completions", part);
      ChatBodies bodies = new ChatBodies(id, answered(lora), created, chat);
      if (!g.stream()) {
        JsonNode answer = bodies.full(run.drain());
        if (part == SimKvHandshake.Part.PREFILL) {
          int[] blocks =
              engine
                  .query(c -> c.cachedPrefixBlockIds(g.prompt(), g.cacheSalt(), g.media()))
                  .get(10, java.util.concurrent.TimeUnit.SECONDS);
          ((ObjectNode) answer)
              .set("kv_transfer_params", handshake.producerParams(id, engine.dpRank(), blocks));
        }
        SimHttp.sendJson(ex, 200, answer);
        return;
      }
      stream(ex, g, run, bodies, chat);
    } finally {
      ranks.done(engine);
    }
  }

  /** Waits for the KV of the prompt's blocks this rank lacks to arrive from the prefill engine. */
  private void pull(RealTimeEngine engine, GenerationRequest g) throws Exception {
    int missing =
        engine
            .query(c -> c.missingPrefillBlocks(g.prompt(), g.cacheSalt(), g.media()))
            .get(10, java.util.concurrent.TimeUnit.SECONDS);
    long micros = transfer.micros(missing, engine.config().blockSize());
    Thread.sleep(micros / 1_000, (int) (micros % 1_000) * 1_000);
  }

  private void stream(
      HttpExchange ex, GenerationRequest g, SimRun run, ChatBodies bodies, boolean chat)
      throws Exception {
    OutputStream os = SimHttp.startStream(ex);
    try {
      if (chat) {
        SimHttp.sse(os, bodies.roleChunk());
      }
      try {
        for (SimRun.Delta d = run.next(); d != null; d = run.next()) {
          SimHttp.sse(
              os, bodies.tokenChunk(d, d.emission().finished() ? run.finishReason() : null));
        }
        if (g.includeUsage()) {
          SimHttp.sse(os, bodies.usageChunk(run.last()));
        }
      } catch (SimApiError e) {
        ObjectNode err = SimHttp.JSON.createObjectNode();
        err.set("error", SimHttp.errorBody(e));
        SimHttp.sse(os, err);
      }
      os.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
      os.flush();
    } catch (IOException e) {
      run.abort();
      throw e;
    }
  }

  /** {@code /v1/messages}. */
  void messages(HttpExchange ex, JsonNode body) throws Exception {
    requireMaxTokens(body);
    String id = SimIds.anthropicMessage();
    ObjectNode chat = SimAnthropic.toChat(body);
    GenerationRequest g =
        GenerationRequest.chat(chat, tokenizer, SimIds.anthropicToolUse(), media());
    String lora = checkModel(g.model());
    RealTimeEngine engine = ranks.pick(ex.getRequestHeaders());
    try {
      SimRun run = start(ex, engine, id, g, lora, "/v1/messages", SimKvHandshake.Part.NONE);
      if (!g.stream()) {
        SimHttp.sendJson(ex, 200, SimAnthropic.message(id, answered(lora), run.drain()));
        return;
      }
      OutputStream os = SimHttp.startStream(ex);
      try {
        SimAnthropic.stream(os, id, answered(lora), run);
      } catch (IOException e) {
        run.abort();
        throw e;
      }
    } finally {
      ranks.done(engine);
    }
  }

  private static void requireMaxTokens(JsonNode body) {
    JsonNode max = body.get("max_tokens");
    if (max == null || !max.isIntegralNumber() || max.asLong() <= 0) {
      throw new SimApiError(
          400, "invalid_request_error", "max_tokens: must be a positive integer", "max_tokens");
    }
  }

  /** {@code /v1/messages/count_tokens}: the prompt tokens of the rendered conversation. */
  void countTokens(HttpExchange ex, JsonNode body) throws IOException {
    GenerationRequest g =
        GenerationRequest.chat(SimAnthropic.toChat(body), tokenizer, "count", media());
    checkModel(g.model());
    ObjectNode out = SimHttp.JSON.createObjectNode();
    out.put("input_tokens", g.prompt().length);
    out.putObject("context_management").put("original_input_tokens", g.prompt().length);
    SimHttp.sendJson(ex, 200, out);
  }

  /** {@code /v1/responses}. */
  void responses(HttpExchange ex, JsonNode body) throws Exception {
    long created = now();
    String id = SimIds.openAi("resp_");
    ObjectNode chat = responses.toChat(body);
    GenerationRequest g =
        GenerationRequest.responses(chat, tokenizer, SimIds.openAiToolCall(), media());
    String lora = checkModel(g.model());
    String model = answered(lora);
    RealTimeEngine engine = ranks.pick(ex.getRequestHeaders());
    try {
      SimRun run = start(ex, engine, id, g, lora, "/v1/responses", SimKvHandshake.Part.NONE);
      if (!g.stream()) {
        run.drain();
        ObjectNode done =
            SimResponsesApi.response(id, model, created, body, run, SimResponsesApi.status(run));
        // Stored before the answer leaves: a client may continue from it the moment it has it.
        responses.remember(body, chat, done);
        SimHttp.sendJson(ex, 200, done);
      } else {
        OutputStream os = SimHttp.startStream(ex);
        try {
          SimResponsesApi.stream(
              os, id, model, created, body, run, done -> responses.remember(body, chat, done));
        } catch (IOException e) {
          run.abort();
          throw e;
        }
      }
    } finally {
      ranks.done(engine);
    }
  }

  private SimRun start(
      HttpExchange ex,
      RealTimeEngine engine,
      String id,
      GenerationRequest g,
      String lora,
      String endpoint,
      SimKvHandshake.Part part)
      throws InterruptedException {
    SimRun run = SimRun.start(engine, id, g, lora, tokenizer, part == SimKvHandshake.Part.DECODE);
    log.add(
        endpoint,
        g,
        run.first(),
        ex.getRequestHeaders().getFirst("traceparent"),
        engine.dpRank(),
        part);
    return run;
  }
}
