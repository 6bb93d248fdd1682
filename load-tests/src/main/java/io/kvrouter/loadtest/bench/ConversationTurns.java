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
 * <p>With {@code --mode repeat} (or {@code both}, the default) each conversation is instead sent
 * again unchanged, {@code turns} times after {@code warmup} unmeasured repeats on another: the
 * whole conversation cached, as a retry or a regenerate finds it.
 *
 * <p>Usage: {@code java -cp kvrouter-all.jar io.kvrouter.loadtest.bench.ConversationTurns --engine
 * URL --ingress URL [--proxies nginx=URL,pekko=URL] [--sizes 32768,131072] [--turns 15] [--warmup
 * 30] [--mode turns|repeat|both] [--model kvrouter-demo]}. Each of {@code --proxies} gets one more
 * conversation in the same rotation, for what a plain proxy hop adds (nginx, the bare Pekko HTTP
 * and Netty relays). Prints one Markdown table row per size.
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
    Map<String, String> a =
        OptionPairs.parse(
            args,
            "ConversationTurns --engine URL --ingress URL [--proxies name=URL,...]"
                + " [--sizes 32768,131072] [--turns 15] [--warmup 30] [--mode both]"
                + " [--model kvrouter-demo]",
            "--engine",
            "--ingress");
    ConversationTurns bench = new ConversationTurns(a.getOrDefault("--model", "kvrouter-demo"));
    int turns = Integer.parseInt(a.getOrDefault("--turns", "15"));
    int warmup = Integer.parseInt(a.getOrDefault("--warmup", "30"));
    List<String> urls = new ArrayList<>(List.of(a.get("--engine"), a.get("--ingress")));
    StringBuilder header =
        new StringBuilder(
            "| conversation | next turn TTFT p50, engine directly | through the ingress | added |");
    StringBuilder rule = new StringBuilder("|---|---:|---:|---:|");
    String proxies = a.getOrDefault("--proxies", "");
    for (String proxy : proxies.isBlank() ? new String[0] : proxies.split(",")) {
      int eq = proxy.indexOf('=');
      if (eq <= 0) {
        System.err.println("--proxies takes name=URL[,name=URL...], not " + proxy);
        System.exit(2);
      }
      urls.add(proxy.substring(eq + 1).trim());
      header.append(" through ").append(proxy, 0, eq).append(" | added |");
      rule.append("---:|---:|");
    }
    System.out.println(header);
    System.out.println(rule);
    String mode = a.getOrDefault("--mode", "both");
    if (!List.of("turns", "repeat", "both").contains(mode)) {
      System.err.println("--mode takes turns, repeat or both, not " + mode);
      System.exit(2);
    }
    for (String size : a.getOrDefault("--sizes", "32768,131072").split(",")) {
      int tokens = Integer.parseInt(size.trim());
      if (!mode.equals("repeat")) {
        bench.run(urls, tokens, warmup, tokens * 37L, true);
        row(
            String.format("%,d tokens", tokens),
            bench.run(urls, tokens, turns, tokens * 31L, true));
      }
      if (!mode.equals("turns")) {
        bench.run(urls, tokens, warmup, tokens * 41L, false);
        row(
            String.format("%,d tokens, repeated", tokens),
            bench.run(urls, tokens, turns, tokens * 43L, false));
      }
    }
  }

  /** One table row: the engine's median TTFT, then each path's and what it added. */
  private static void row(String label, double[][] ttft) {
    double engine = median(ttft[0]);
    StringBuilder row = new StringBuilder(String.format("| %s | %.1f ms", label, engine));
    for (int u = 1; u < ttft.length; u++) {
      double through = median(ttft[u]);
      row.append(String.format(" | %.1f ms | %+.1f ms", through, through - engine));
    }
    System.out.println(row.append(" |"));
  }

  /**
   * TTFT in ms of each measured turn, per URL ([0] the engine): one conversation per URL, turns
   * sent to each URL in turn so all see the same machine load. A conversation that is not {@code
   * growing} is sent again unchanged each turn (a retry, a regenerate, parallel samples): its
   * engine has all of it cached but the last token.
   */
  private double[][] run(List<String> urls, int tokens, int turns, long seed, boolean growing)
      throws IOException, InterruptedException {
    List<List<Map<String, Object>>> chats = new ArrayList<>();
    for (int u = 0; u < urls.size(); u++) {
      chats.add(conversation(tokens, seed + u));
      ttft(urls.get(u), chats.get(u));
    }
    double[][] out = new double[urls.size()][turns];
    for (int t = 0; t < turns; t++) {
      for (int u = 0; u < urls.size(); u++) {
        if (growing) {
          grow(chats.get(u), seed + 100 * (u + 1) + t);
        }
        out[u][t] = ttft(urls.get(u), chats.get(u));
      }
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
