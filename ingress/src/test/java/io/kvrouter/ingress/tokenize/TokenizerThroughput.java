package io.kvrouter.ingress.tokenize;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Prints single-thread encode throughput (tokens/s) on one long text for the Qwen3 Hugging Face
 * tokenizer and the jtokkit encodings, plus the time to render a chat with the Qwen3 template. A
 * measurement, not a test: nothing is asserted. Run (after {@code test-compile}):
 *
 * <pre>
 * mvn -B -o -q -pl ingress dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt -Dmdep.includeScope=test
 * java -Dai.djl.offline=true -cp ingress/target/test-classes:ingress/target/classes:$(cat /tmp/cp.txt) \
 *     io.kvrouter.ingress.tokenize.TokenizerThroughput [path/to/qwen3/dir]
 * </pre>
 */
public final class TokenizerThroughput {

  private TokenizerThroughput() {}

  public static void main(String[] args) {
    Path dir = Path.of(args.length > 0 ? args[0] : "ingress/target/test-tokenizers/qwen3");
    String unit =
        "The router hashes every full block of sixteen tokens; Grüße aus Köln, "
            + "東京は晴れ 🌞. def f(x): return x * 2  # doubles\n";
    String text = unit.repeat(4000);
    try (HfPromptTokenizer qwen3 = HfPromptTokenizer.load(dir.resolve("tokenizer.json"))) {
      measure("qwen3 (DJL HF tokenizers)", qwen3, text);
    }
    measure("o200k_base (jtokkit)", TiktokenPromptTokenizer.forEncoding("o200k_base"), text);
    measure("cl100k_base (jtokkit)", TiktokenPromptTokenizer.forEncoding("cl100k_base"), text);

    HfTokenizerConfig hf = HfTokenizerConfig.read(dir.resolve("tokenizer_config.json"));
    JinjaChatTemplate template = new JinjaChatTemplate(hf.chatTemplate(), hf.specialTokens());
    List<Map<String, Object>> chat =
        List.of(
            Map.of("role", "system", "content", "You are a helpful assistant."),
            Map.of("role", "user", "content", "Name a prime."),
            Map.of("role", "assistant", "content", "<think>\nsmall\n</think>\n\n7"),
            Map.of("role", "user", "content", "Another one?"));
    int renders = 2000;
    for (int i = 0; i < renders; i++) {
      template.render(chat, null, true, Map.of());
    }
    long t0 = System.nanoTime();
    for (int i = 0; i < renders; i++) {
      template.render(chat, null, true, Map.of());
    }
    System.out.printf(
        "qwen3 chat template render: %.1f us per 4-message chat%n",
        (System.nanoTime() - t0) / 1e3 / renders);
  }

  private static void measure(String name, PromptTokenizer tokenizer, String text) {
    int tokens = tokenizer.encode(text, true).length;
    for (int i = 0; i < 3; i++) {
      tokenizer.encode(text, true);
    }
    int rounds = 10;
    long t0 = System.nanoTime();
    for (int i = 0; i < rounds; i++) {
      tokenizer.encode(text, true);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    System.out.printf(
        "%-28s %,d chars -> %,d tokens; %,.0f tokens/s (1 thread)%n",
        name, text.length(), tokens, tokens * (double) rounds / seconds);
  }
}
