package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * {@link ChatPrefixCache} against the plain path (render, then tokenize the whole text) on random
 * multi-turn conversations: every turn of a conversation is encoded through the cache, as a client
 * resends the growing history, and must give exactly the ids of tokenizing the rendered text whole.
 * Contents mix ASCII, accents, CJK, emoji, line breaks, runs of spaces and the turn marker itself,
 * so turn boundaries also fall inside contents. Every turn after the first must hit the cache (a
 * conversation jqwik tries twice may hit from its first turn).
 */
class ChatPrefixCachePropertiesTest {

  private static final TokenizerRegistry REGISTRY =
      TokenizerRegistry.fromSettings(
          List.of(
              new ModelSettings("chatml-o200k", "tiktoken:o200k_base", "chatml", 16, 1 << 20),
              new ModelSettings("chatml-cl100k", "tiktoken:cl100k_base", "chatml", 16, 1 << 20),
              new ModelSettings(
                  "chatml-qwen3", "hf:" + Qwen3Files.tokenizerJson(), "chatml", 16, 1 << 20),
              new ModelSettings(
                  "qwen3",
                  "hf:" + Qwen3Files.tokenizerJson(),
                  Qwen3Files.tokenizerConfig().toString(),
                  16,
                  1 << 20)));

  private static final ChatPrefixCache CACHE = new ChatPrefixCache(REGISTRY, 64L << 20);

  @AfterContainer
  static void close() {
    REGISTRY.close();
  }

  @Property(tries = 150)
  void chatMlWithO200k_everyTurnEncodesAsTheWholeText(@ForAll("conversations") Conversation c) {
    assertEveryTurn("chatml-o200k", c);
  }

  @Property(tries = 100)
  void chatMlWithCl100k_everyTurnEncodesAsTheWholeText(@ForAll("conversations") Conversation c) {
    assertEveryTurn("chatml-cl100k", c);
  }

  @Property(tries = 100)
  void chatMlWithQwen3Tokenizer_everyTurnEncodesAsTheWholeText(
      @ForAll("conversations") Conversation c) {
    assertEveryTurn("chatml-qwen3", c);
  }

  @Property(tries = 150)
  void qwen3Template_everyTurnEncodesAsTheWholeText(@ForAll("conversations") Conversation c) {
    assertEveryTurn("qwen3", c);
  }

  @Property(tries = 400)
  void anyTurnBoundary_splitsTheTokensOfEveryTokenizerExactly(
      @ForAll("texts") String content, @ForAll("models") String name) {
    ModelTokenizer model = REGISTRY.get(name);
    PromptTokenizer t = model.tokenizer();
    String text =
        model.renderChat(List.of(Map.of("role", "user", "content", content)), null, true, Map.of());
    int[] whole = t.encode(text, false);
    for (int b : ChatPrefixCache.boundaries(text, model.chatTemplate().turnMarker())) {
      int[] head = t.encode(text.substring(0, b), false);
      int[] tail = t.encode(text.substring(b), false);
      int[] joined = java.util.Arrays.copyOf(head, head.length + tail.length);
      System.arraycopy(tail, 0, joined, head.length, tail.length);
      assertThat(joined).as("%s split at %d of %s", name, b, text).containsExactly(whole);
    }
  }

  @Provide
  Arbitrary<String> texts() {
    return text().list().ofMaxSize(4).map(parts -> String.join("", parts));
  }

  @Provide
  Arbitrary<String> models() {
    return Arbitraries.of(List.copyOf(REGISTRY.modelNames()));
  }

  @Example
  void everyModelHere_splitsAtItsMarker() {
    for (String name : REGISTRY.modelNames()) {
      assertThat(ChatPrefixCache.splitsAtMarker(REGISTRY.get(name))).as(name).isTrue();
    }
  }

  @Example
  void aTinyBudget_staysWithinItsBytes_andStillEncodesExactly() {
    ChatPrefixCache tiny = new ChatPrefixCache(REGISTRY, 600);
    ModelTokenizer model = REGISTRY.get("chatml-o200k");
    List<Map<String, Object>> messages = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      messages.add(Map.of("role", i % 2 == 0 ? "user" : "assistant", "content", "turn " + i));
      String text = model.renderChat(messages, null, true, Map.of());
      assertThat(tiny.encode(model, text)).containsExactly(model.tokenizer().encode(text, false));
      assertThat(tiny.bytes()).isLessThanOrEqualTo(600);
    }
  }

  private static void assertEveryTurn(String name, Conversation c) {
    ModelTokenizer model = REGISTRY.get(name);
    List<Map<String, Object>> history = new ArrayList<>();
    if (c.system() != null) {
      history.add(Map.of("role", "system", "content", c.system()));
    }
    long hitsBefore = CACHE.hits();
    int turns = 0;
    for (Turn turn : c.turns()) {
      history.add(Map.of("role", "user", "content", turn.user()));
      String text = model.renderChat(history, null, true, Map.of());
      assertThat(CACHE.encode(model, text))
          .as("turn %d of %s", turns, name)
          .containsExactly(model.tokenizer().encode(text, false));
      turns++;
      Map<String, Object> reply = new HashMap<>();
      reply.put("role", "assistant");
      reply.put("content", turn.assistant());
      if (turn.reasoning() != null) {
        reply.put("reasoning_content", turn.reasoning());
      }
      history.add(reply);
      if (turn.tool() != null) {
        history.add(Map.of("role", "tool", "content", turn.tool()));
      }
    }
    assertThat(CACHE.hits() - hitsBefore)
        .as("turns that re-used the history")
        .isGreaterThanOrEqualTo(turns - 1);
  }

  record Turn(String user, String assistant, String reasoning, String tool) {}

  record Conversation(String system, List<Turn> turns) {}

  @Provide
  Arbitrary<Conversation> conversations() {
    Arbitrary<String> text = text();
    Arbitrary<Turn> turn =
        Combinators.combine(text, text, text.injectNull(0.6), text.injectNull(0.8)).as(Turn::new);
    return Combinators.combine(text.injectNull(0.4), turn.list().ofMinSize(1).ofMaxSize(6))
        .as(Conversation::new);
  }

  private static Arbitrary<String> text() {
    Arbitrary<String> atom =
        Arbitraries.of(
            "hello",
            " world",
            "Hello",
            "'s",
            "12345",
            " ",
            "  ",
            "\n",
            "\n\n",
            " \n",
            "\t",
            "!",
            "?!",
            "...",
            "<|im_start|>",
            "<|im_end|>",
            "\n<|im_start|>",
            "x\n<|im_start|>",
            "é",
            "Grüße",
            "東京",
            "🌞",
            "<think>",
            "</think>",
            "a/b",
            "\r\n",
            "{\"k\": 1}");
    return atom.list().ofMinSize(1).ofMaxSize(12).map(parts -> String.join("", parts));
  }
}
