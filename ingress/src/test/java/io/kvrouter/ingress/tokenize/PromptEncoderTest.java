package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PromptEncoderTest {

  /** A pool that counts what it was handed and runs it on a thread of its own. */
  private static final class CountingPool implements Executor {
    final AtomicInteger handed = new AtomicInteger();

    @Override
    public void execute(Runnable task) {
      handed.incrementAndGet();
      new Thread(task, "tokenize-pool").start();
    }
  }

  private static PromptEncoder encoder(CountingPool pool, long inlineMaxBytes) {
    return new PromptEncoder(pool, null, inlineMaxBytes);
  }

  @Test
  void aShortBody_tokenizesOnTheCallersThread_withoutTheHandOff() {
    CountingPool pool = new CountingPool();
    String caller = Thread.currentThread().getName();
    String ranOn =
        encoder(pool, 8192)
            .forBody(8192, () -> Thread.currentThread().getName())
            .toCompletableFuture()
            .join();
    assertThat(ranOn).isEqualTo(caller);
    assertThat(pool.handed).hasValue(0);
  }

  @Test
  void aLongBody_goesToThePool() {
    CountingPool pool = new CountingPool();
    String ranOn =
        encoder(pool, 8192)
            .forBody(8193, () -> Thread.currentThread().getName())
            .toCompletableFuture()
            .join();
    assertThat(ranOn).isEqualTo("tokenize-pool");
    assertThat(pool.handed).hasValue(1);
  }

  @Test
  void withoutAnInlineSize_everyBodyGoesToThePool() {
    CountingPool pool = new CountingPool();
    new PromptEncoder(pool, null).forBody(1, () -> 1).toCompletableFuture().join();
    assertThat(pool.handed).hasValue(1);
  }

  @Test
  void aFailureOnTheCallersThread_failsTheStageAsOnThePool() {
    var stage =
        encoder(new CountingPool(), 8192)
            .forBody(
                10,
                () -> {
                  throw new ChatTemplateException("bad turn");
                });
    assertThat(stage.toCompletableFuture()).isCompletedExceptionally();
    assertThat(stage.handle((v, e) -> e.getCause().getMessage()).toCompletableFuture().join())
        .isEqualTo("bad turn");
  }

  private static final TokenizerRegistry REGISTRY =
      TokenizerRegistry.fromSettings(
          List.of(new ModelSettings("chatml-o200k", "tiktoken:o200k_base", "chatml", 16, 1 << 20)));

  /** A conversation of {@code turns} user and assistant messages of about 2,000 chars each. */
  private static List<Map<String, Object>> conversation(int turns) {
    List<Map<String, Object>> messages = new ArrayList<>();
    messages.add(Map.of("role", "system", "content", "You are terse."));
    for (int t = 0; t < turns; t++) {
      messages.add(
          Map.of(
              "role",
              t % 2 == 0 ? "user" : "assistant",
              "content",
              ("turn " + t + " says something new each time. ").repeat(50)));
    }
    return messages;
  }

  private static int[] staged(PromptEncoder encoder, List<Map<String, Object>> messages) {
    return encoder
        .encodeChatStaged(REGISTRY.get("chatml-o200k"), messages, null, true, Map.of())
        .toCompletableFuture()
        .join();
  }

  @Test
  void aLongChatSentAgain_orContinuedByAShortTurn_tokenizesOnTheCallersThread() {
    CountingPool pool = new CountingPool();
    PromptEncoder encoder = new PromptEncoder(pool, new ChatPrefixCache(REGISTRY, 64L << 20), 8192);
    ModelTokenizer model = REGISTRY.get("chatml-o200k");
    List<Map<String, Object>> chat = conversation(9);

    int[] first = staged(encoder, chat);
    assertThat(pool.handed).as("the first time, 18k chars are new").hasValue(1);
    assertThat(staged(encoder, chat)).isEqualTo(first);
    assertThat(pool.handed).as("sent again: only the generation prompt is new").hasValue(1);

    List<Map<String, Object>> next = new ArrayList<>(chat);
    next.add(Map.of("role", "assistant", "content", "Short answer."));
    next.add(Map.of("role", "user", "content", "And a short question?"));
    assertThat(staged(encoder, next)).isEqualTo(model.encodeChat(next, null, true, Map.of()));
    assertThat(pool.handed).as("a short next turn").hasValue(1);

    List<Map<String, Object>> longer = new ArrayList<>(next);
    longer.addAll(conversation(6).subList(1, 7));
    assertThat(staged(encoder, longer)).isEqualTo(model.encodeChat(longer, null, true, Map.of()));
    assertThat(pool.handed).as("six long new turns").hasValue(2);
  }
}
