package io.kvrouter.loadtest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.tokenize.ChatMlTemplate;
import io.kvrouter.ingress.tokenize.PromptTokenizer;
import io.kvrouter.ingress.tokenize.TiktokenPromptTokenizer;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What a long conversation's next turn costs through the ingress compared with the engine directly:
 * for each size, two conversations of that many tokens (ChatML, o200k, as the demo model) are sent
 * whole once, then grow by {@code turns} turns each (an assistant reply and a new user message of
 * about 100 words), alternating a turn to the engine with a turn through the ingress so both see
 * the same machine load. Time to first token of each turn is measured (streaming, {@code
 * max_tokens} 1); the report gives medians and the difference.
 *
 * <p>Before the measured turns, {@code warmup} turns (default 30) are sent the same way on another
 * pair of conversations of the same size and not measured: a long turn takes code paths (the chat
 * prefix cache, rendering and writing a body of hundreds of kilobytes) that the short-prompt bench
 * before it never ran, so the first few dozen long turns of a fresh JVM run partly interpreted.
 * Both paths get the same warm-up.
 *
 * <p>Usage: {@code java -cp kvrouter-all.jar io.kvrouter.loadtest.bench.ConversationTurns --engine
 * URL --ingress URL [--sizes 32768,131072] [--turns 15] [--warmup 30] [--model kvrouter-demo]}.
 * Prints one Markdown table row per size.
 */
public final class ConversationTurns {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newHttpClient();
  private final PromptTokenizer o200k = TiktokenPromptTokenizer.forEncoding("o200k_base");
  private final String model;

  private ConversationTurns(String model) {
    this.model = model;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new java.util.HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      a.put(args[i], args[i + 1]);
    }
    if (!a.containsKey("--engine") || !a.containsKey("--ingress")) {
      System.err.println(
          "usage: ConversationTurns --engine URL --ingress URL [--sizes 32768,131072]"
              + " [--turns 15] [--warmup 30] [--model kvrouter-demo]");
      System.exit(2);
    }
    ConversationTurns bench = new ConversationTurns(a.getOrDefault("--model", "kvrouter-demo"));
    int turns = Integer.parseInt(a.getOrDefault("--turns", "15"));
    int warmup = Integer.parseInt(a.getOrDefault("--warmup", "30"));
    System.out.println(
        "| conversation | next turn TTFT p50, engine directly | through the ingress | added |");
    System.out.println("|---|---:|---:|---:|");
    for (String size : a.getOrDefault("--sizes", "32768,131072").split(",")) {
      int tokens = Integer.parseInt(size.trim());
      bench.run(a.get("--engine"), a.get("--ingress"), tokens, warmup, tokens * 37L);
      double[][] ttft =
          bench.run(a.get("--engine"), a.get("--ingress"), tokens, turns, tokens * 31L);
      double engine = median(ttft[0]);
      double ingress = median(ttft[1]);
      System.out.printf(
          "| %,d tokens | %.1f ms | %.1f ms | %+.1f ms |%n",
          tokens, engine, ingress, ingress - engine);
    }
  }

  /** TTFT in ms of each measured turn: [0] engine, [1] ingress. */
  private double[][] run(String engineUrl, String ingressUrl, int tokens, int turns, long seed)
      throws IOException, InterruptedException {
    List<Map<String, Object>> engineChat = conversation(tokens, seed);
    List<Map<String, Object>> ingressChat = conversation(tokens, seed + 1);
    ttft(engineUrl, engineChat);
    ttft(ingressUrl, ingressChat);
    double[][] out = new double[2][turns];
    for (int t = 0; t < turns; t++) {
      grow(engineChat, seed + 100 + t);
      grow(ingressChat, seed + 200 + t);
      out[0][t] = ttft(engineUrl, engineChat);
      out[1][t] = ttft(ingressUrl, ingressChat);
    }
    return out;
  }

  /** A system prompt, then user and assistant turns of pseudo-words, until {@code tokens}. */
  private List<Map<String, Object>> conversation(int tokens, long seed) {
    List<Map<String, Object>> chat = new ArrayList<>();
    chat.add(Map.of("role", "system", "content", PseudoWords.words(seed, 100)));
    int turn = 0;
    while (o200k.encode(ChatMlTemplate.INSTANCE.render(chat, null, true, Map.of()), false).length
        < tokens - 3000) {
      chat.add(Map.of("role", "user", "content", PseudoWords.words(seed + 2 * turn, 800)));
      chat.add(Map.of("role", "assistant", "content", PseudoWords.words(seed + 2 * turn + 1, 200)));
      turn++;
    }
    chat.add(Map.of("role", "user", "content", PseudoWords.words(seed - 1, 100)));
    return chat;
  }

  private static void grow(List<Map<String, Object>> chat, long seed) {
    chat.add(Map.of("role", "assistant", "content", PseudoWords.words(seed, 30)));
    chat.add(Map.of("role", "user", "content", PseudoWords.words(seed + 7, 100)));
  }

  /** Sends the conversation, streaming; returns ms until the first body bytes. */
  private double ttft(String baseUrl, List<Map<String, Object>> chat)
      throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode();
    body.put("model", model);
    body.put("max_tokens", 1);
    body.put("stream", true);
    ArrayNode messages = body.putArray("messages");
    for (Map<String, Object> m : chat) {
      messages
          .addObject()
          .put("role", (String) m.get("role"))
          .put("content", (String) m.get("content"));
    }
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(baseUrl + "/v1/chat/completions"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)))
            .build();
    long start = System.nanoTime();
    HttpResponse<InputStream> response =
        http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream in = response.body()) {
      int first = in.read();
      double ms = (System.nanoTime() - start) / 1e6;
      in.readAllBytes();
      if (response.statusCode() != 200 || first < 0) {
        throw new IOException(baseUrl + " answered " + response.statusCode());
      }
      return ms;
    }
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
