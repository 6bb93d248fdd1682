package io.kvrouter.systemtest.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.metrics.PrometheusText;
import io.kvrouter.testing.LoopbackHttp;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

/**
 * Long streamed answers sent through the ingresses while {@link ChaosIT} kills nodes: chat and
 * completions text answers of {@link #MAX_TOKENS} tokens, and chat answers that are a long tool
 * call, one at a time per worker, each ingress in turn. Each answer is kept whole (its text, tool
 * call, usage, error event, whether it reached {@code [DONE]}), so that the test can hold the text
 * answers to an uncut reference run of the same request: the simulated engine's answers depend on
 * their context only, so the replica that serves the reference does not matter.
 *
 * <p>Also samples each ingress's {@code kvrouter_migrations_total} per outcome, per incarnation (a
 * restarted ingress starts its counters again), so that refused migrations can be counted.
 */
final class LongAnswers {

  /** Tokens of each text answer: a few seconds of decoding at the chaos engines' speed. */
  static final int MAX_TOKENS = 600;

  /** Distinct prompts per kind: the reference run sends each once. */
  static final int PROMPTS = 4;

  /** Properties of the tool's schema: the call's arguments take some 300 tokens to stream. */
  private static final int TOOL_PROPERTIES = 180;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** What an answer was asked for. */
  enum Kind {
    CHAT,
    COMPLETION,
    TOOL_CALL
  }

  /**
   * One streamed answer as the client saw it.
   *
   * @param target the ingress it was sent to
   * @param status the HTTP status (0: none)
   * @param events the SSE data events received ([DONE] excluded)
   * @param error the error event's message, or null
   * @param failure the transport failure, or null
   */
  record Streamed(
      Kind kind,
      int prompt,
      int target,
      long sentNanos,
      long endNanos,
      int status,
      int events,
      String text,
      String arguments,
      int completionTokens,
      String error,
      boolean done,
      String failure) {

    boolean started() {
      return events > 0;
    }

    String describe() {
      return String.format(
          "%s #%d via ingress-%d %.3f-%.3f s: status %d, %d events, %d tokens, done %s, error %s,"
              + " failure %s",
          kind,
          prompt,
          target,
          sentNanos / 1e9,
          endNanos / 1e9,
          status,
          events,
          completionTokens,
          done,
          error,
          failure);
    }
  }

  private final ChaosCluster cluster;
  private final LongSupplier clock;
  private final List<Streamed> answers = new CopyOnWriteArrayList<>();
  private final Map<String, Map<String, Double>> migrations = new ConcurrentHashMap<>();

  /**
   * The kind of answer each sending thread is streaming and the replica it streams from, once its
   * first event is in.
   */
  private final Map<Thread, String> streaming = new ConcurrentHashMap<>();

  private volatile boolean stopped;

  LongAnswers(ChaosCluster cluster, LongSupplier clock) {
    this.cluster = cluster;
    this.clock = clock;
  }

  /**
   * A client that sends answers of {@code kind} one after the other until stop, each prompt in
   * turn, to each ingress in turn.
   */
  Runnable worker(Kind kind) {
    return () -> {
      for (int i = 0; !stopped; i++) {
        answers.add(send(kind, i % PROMPTS, (i + kind.ordinal()) % 2, clock));
      }
    };
  }

  /** Samples the ingresses' migration counters until stop. */
  Runnable sampler() {
    return () -> {
      while (!stopped) {
        sampleMigrations();
        try {
          Thread.sleep(500); // the sampling interval
        } catch (InterruptedException e) {
          return;
        }
      }
    };
  }

  void stop() {
    stopped = true;
  }

  /** True while an answer of {@code kind} is streaming from replica {@code replica}. */
  boolean streamingOn(Kind kind, String replica) {
    return streaming.containsValue(kind + "@" + replica);
  }

  List<Streamed> answers() {
    return answers;
  }

  /** Migrations per outcome over every ingress incarnation seen. */
  Map<String, Double> migrations() {
    sampleMigrations();
    Map<String, Double> out = new HashMap<>();
    migrations.values().forEach(m -> m.forEach((k, v) -> out.merge(k, v, Double::sum)));
    return out;
  }

  private void sampleMigrations() {
    for (ChaosCluster.Node i : cluster.ingresses) {
      String key = i.name + "#" + i.incarnation;
      try {
        Map<String, Double> now = new HashMap<>();
        for (PrometheusText.Sample s :
            PrometheusText.parse(LoopbackHttp.getOk(i.url() + "/metrics")).samples()) {
          if (s.name().equals("kvrouter_migrations_total")) {
            now.merge(s.labels().getOrDefault("outcome", ""), s.value(), Double::sum);
          }
        }
        migrations.put(key, now);
      } catch (Exception down) {
        // down or restarting: its last sample stands
      }
    }
  }

  /**
   * True when {@code arguments} are the whole call the simulated engine makes to the tool: every
   * property with its string value {@code "sim"} ({@code SimToolCalls}).
   */
  static boolean wholeCall(String arguments) {
    ObjectNode expected = JSON.createObjectNode();
    for (int p = 0; p < TOOL_PROPERTIES; p++) {
      expected.put("field_" + p, "sim");
    }
    try {
      return JSON.readTree(arguments).equals(expected);
    } catch (java.io.IOException notJson) {
      return false;
    }
  }

  /** The request body of prompt {@code prompt} of {@code kind}. */
  static ObjectNode body(Kind kind, int prompt) {
    ObjectNode body =
        JSON.createObjectNode()
            .put("model", ChaosCluster.MODEL)
            .put("max_tokens", MAX_TOKENS)
            .put("stream", true);
    body.putObject("stream_options").put("include_usage", true);
    String text =
        "Long answer "
            + prompt
            + ": tell the whole story of the lighthouse keeper and the storm, in every detail.";
    if (kind == Kind.COMPLETION) {
      return body.put("prompt", text);
    }
    ArrayNode messages = body.putArray("messages");
    if (kind == Kind.TOOL_CALL) {
      messages.addObject().put("role", "user").put("content", "Use lookup_all for " + text);
      ObjectNode fn =
          body.putArray("tools").addObject().put("type", "function").putObject("function");
      fn.put("name", "lookup_all");
      ObjectNode props = fn.putObject("parameters").put("type", "object").putObject("properties");
      for (int p = 0; p < TOOL_PROPERTIES; p++) {
        props.putObject("field_" + p).put("type", "string");
      }
    } else {
      messages.addObject().put("role", "user").put("content", text);
    }
    return body;
  }

  /** What the client has read of one answer so far. */
  private final class Reading {
    final Kind kind;
    final String replica;
    int events;
    final StringBuilder text = new StringBuilder();
    final StringBuilder arguments = new StringBuilder();
    int tokens = -1;
    String error;
    boolean done;

    Reading(Kind kind, String replica) {
      this.kind = kind;
      this.replica = replica;
    }

    void event(String data) {
      if (data.equals("[DONE]")) {
        done = true;
        return;
      }
      if (events++ == 0) {
        streaming.put(Thread.currentThread(), kind + "@" + replica);
      }
      JsonNode chunk;
      try {
        chunk = JSON.readTree(data);
      } catch (java.io.IOException notJson) {
        error = "not JSON: " + data;
        return;
      }
      if (chunk.has("error")) {
        error = chunk.path("error").path("message").asText(chunk.get("error").toString());
        return;
      }
      for (JsonNode choice : chunk.path("choices")) {
        text.append(choice.path("text").asText(""));
        text.append(choice.path("delta").path("content").asText(""));
        for (JsonNode call : choice.path("delta").path("tool_calls")) {
          arguments.append(call.path("function").path("arguments").asText(""));
        }
      }
      if (chunk.hasNonNull("usage")) {
        tokens = chunk.path("usage").path("completion_tokens").asInt();
      }
    }
  }

  /** Sends one answer's request to ingress {@code target} and reads its stream to the end. */
  Streamed send(Kind kind, int prompt, int target, LongSupplier clock) {
    String path = kind == Kind.COMPLETION ? "/v1/completions" : "/v1/chat/completions";
    long sent = clock.getAsLong();
    int status = 0;
    Reading read = new Reading(kind, "");
    String failure = null;
    try {
      HttpResponse<InputStream> r =
          LoopbackHttp.postForStream(
              cluster.ingresses.get(target).url() + path,
              body(kind, prompt).toString(),
              Duration.ofSeconds(120));
      status = r.statusCode();
      read = new Reading(kind, r.headers().firstValue("x-kvrouter-replica").orElse(""));
      LoopbackHttp.sseData(r.body(), read::event);
    } catch (Exception e) {
      failure = e.toString();
    } finally {
      streaming.remove(Thread.currentThread());
    }
    return new Streamed(
        kind,
        prompt,
        target,
        sent,
        clock.getAsLong(),
        status,
        read.events,
        read.text.toString(),
        read.arguments.toString(),
        read.tokens,
        read.error,
        read.done,
        failure);
  }
}
