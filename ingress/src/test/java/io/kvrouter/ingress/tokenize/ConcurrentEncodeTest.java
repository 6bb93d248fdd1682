package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Smoke test for the thread-safety the HTTP layer relies on: many threads encoding and rendering at
 * once get exactly what one thread gets.
 */
class ConcurrentEncodeTest {

  private static final int THREADS = 8;
  private static final int ROUNDS = 50;

  private static HfPromptTokenizer qwen3;
  private static JinjaChatTemplate qwen3Template;

  @BeforeAll
  static void load() {
    qwen3 = HfPromptTokenizer.load(Qwen3Files.tokenizerJson());
    HfTokenizerConfig hf = HfTokenizerConfig.read(Qwen3Files.tokenizerConfig());
    qwen3Template = new JinjaChatTemplate(hf.chatTemplate(), hf.specialTokens());
  }

  @AfterAll
  static void close() {
    qwen3.close();
  }

  private static List<String> texts() {
    List<String> texts = new ArrayList<>();
    for (int i = 0; i < THREADS; i++) {
      texts.add(("Thread " + i + " says: Grüße aus Köln, 東京は晴れ 🌞. ").repeat(20 + i * 7));
    }
    return texts;
  }

  @Test
  void hfTokenizer_encodesConcurrently_likeSequentially() throws Exception {
    assertConcurrentEqualsSequential(text -> qwen3.encode(text, true));
  }

  @Test
  void tiktoken_encodesConcurrently_likeSequentially() throws Exception {
    PromptTokenizer o200k = TiktokenPromptTokenizer.forEncoding("o200k_base");
    assertConcurrentEqualsSequential(text -> o200k.encode(text, true));
  }

  @Test
  void jinjaTemplate_rendersConcurrently_likeSequentially() throws Exception {
    assertConcurrentEqualsSequential(
        text ->
            qwen3Template.render(
                List.of(
                    Map.of("role", "user", "content", text),
                    Map.of("role", "assistant", "content", "<think>\nhm\n</think>\n\nok"),
                    Map.of("role", "user", "content", text.substring(0, 10))),
                null,
                true,
                Map.of()));
  }

  private interface Work {
    Object apply(String text) throws Exception;
  }

  private static void assertConcurrentEqualsSequential(Work work) throws Exception {
    List<String> texts = texts();
    List<Object> expected = new ArrayList<>();
    for (String t : texts) {
      expected.add(work.apply(t));
    }
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<List<Object>>> futures = new ArrayList<>();
      for (int i = 0; i < THREADS; i++) {
        int offset = i;
        Callable<List<Object>> task =
            () -> {
              start.await();
              List<Object> results = new ArrayList<>();
              for (int r = 0; r < ROUNDS; r++) {
                results.add(work.apply(texts.get((offset + r) % texts.size())));
              }
              return results;
            };
        futures.add(pool.submit(task));
      }
      start.countDown();
      for (int i = 0; i < THREADS; i++) {
        List<Object> results = futures.get(i).get();
        for (int r = 0; r < ROUNDS; r++) {
          assertThat(results.get(r)).isEqualTo(expected.get((i + r) % texts.size()));
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
