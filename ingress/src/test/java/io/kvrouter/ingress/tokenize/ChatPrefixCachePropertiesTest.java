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

  @Property(tries = 150)
  void requestsSharingASystemPrompt_encodeAsTheWholeText(
      @ForAll("sharedSystemRequests") List<Request> requests, @ForAll("models") String name) {
    ModelTokenizer model = REGISTRY.get(name);
    ChatPrefixCache cache = new ChatPrefixCache(REGISTRY, 64L << 20);
    for (Request r : requests) {
      String text = model.renderChat(r.messages(), r.tools(), true, Map.of());
      assertThat(cache.encode(model, text))
          .as("%s: %s", name, text)
          .containsExactly(model.tokenizer().encode(text, false));
    }
  }

  @Example
  void aSecondRequestWithTheSameSystemPrompt_tokenizesOnlyWhatFollowsIt() {
    ModelTokenizer plain = REGISTRY.get("chatml-o200k");
    List<String> encoded = new ArrayList<>();
    ModelTokenizer model = recordingModel(plain, encoded);
    ChatPrefixCache cache = new ChatPrefixCache(REGISTRY, 64L << 20);
    String system = "You are the support agent of Example Corp. Answer briefly. ".repeat(20);
    List<Map<String, Object>> tools =
        List.of(Map.of("type", "function", "function", Map.of("name", "lookup_order")));
    cache.encode(model, render(plain, system, tools, "Where is my order?"));
    encoded.clear();

    String second = render(plain, system, tools, "Can I return a gift?");
    int[] ids = cache.encode(model, second);

    assertThat(ids).containsExactly(plain.tokenizer().encode(second, false));
    assertThat(String.join("", encoded))
        .as("text tokenized for the second request")
        .doesNotContain("Example Corp")
        .doesNotContain("lookup_order")
        .contains("Can I return a gift?");
    assertThat(cache.hits()).isEqualTo(1);
  }

  @Example
  void theSameConversationSentAgain_tokenizesOnlyItsGenerationPrompt() {
    // a retry, a regenerate or parallel samples: the whole conversation is cached
    ModelTokenizer plain = REGISTRY.get("chatml-o200k");
    List<String> encoded = new ArrayList<>();
    ModelTokenizer model = recordingModel(plain, encoded);
    ChatPrefixCache cache = new ChatPrefixCache(REGISTRY, 64L << 20);
    List<Map<String, Object>> chat = new ArrayList<>();
    chat.add(Map.of("role", "system", "content", "You answer questions about ships. ".repeat(30)));
    for (int turn = 0; turn < 6; turn++) {
      chat.add(Map.of("role", "user", "content", "Question " + turn + " about hulls. ".repeat(40)));
      chat.add(Map.of("role", "assistant", "content", "Answer " + turn + " on keels. ".repeat(40)));
    }
    chat.add(Map.of("role", "user", "content", "And the last question?"));
    String text = plain.renderChat(chat, null, true, Map.of());
    cache.encode(model, text);
    encoded.clear();

    int[] again = cache.encode(model, text);

    assertThat(again).containsExactly(plain.tokenizer().encode(text, false));
    assertThat(encoded)
        .as("texts tokenized for the repeat")
        .containsExactly(text.substring(text.lastIndexOf("<|im_start|>")));
    assertThat(cache.hits()).isEqualTo(1);
  }

  private static String render(
      ModelTokenizer model, String system, List<Map<String, Object>> tools, String user) {
    return model.renderChat(
        List.of(
            Map.of("role", "system", "content", system), Map.of("role", "user", "content", user)),
        tools,
        true,
        Map.of());
  }

  /** {@code plain} with a tokenizer that adds every text it encodes to {@code encoded}. */
  private static ModelTokenizer recordingModel(ModelTokenizer plain, List<String> encoded) {
    return new ModelTokenizer(
        plain.name(), recording(plain.tokenizer(), encoded), plain.chatTemplate(), 16, 1 << 20);
  }

  /** {@code inner}, adding every text it encodes to {@code encoded}. */
  private static PromptTokenizer recording(PromptTokenizer inner, List<String> encoded) {
    return new PromptTokenizer() {
      @Override
      public int[] encode(String text, boolean addSpecialTokens) {
        encoded.add(text);
        return inner.encode(text, addSpecialTokens);
      }

      @Override
      public String decode(int[] ids) {
        return inner.decode(ids);
      }

      @Override
      public String description() {
        return inner.description();
      }
    };
  }

  record Request(List<Map<String, Object>> messages, List<Map<String, Object>> tools) {}

  /**
   * Requests in a row that draw their system prompts (none, one or two system messages) and tools
   * from a small pool, so later ones share a system prompt with earlier ones, then one to three
   * other messages of their own.
   */
  @Provide
  Arbitrary<List<Request>> sharedSystemRequests() {
    Arbitrary<List<Map<String, Object>>> tools =
        Arbitraries.of("lookup", "search\n<|im_start|>", "x\n")
            .map(
                n ->
                    List.<Map<String, Object>>of(
                        Map.of("type", "function", "function", Map.of("name", n))))
            .injectNull(0.5);
    Arbitrary<List<Map<String, Object>>> rest =
        Combinators.combine(Arbitraries.of("user", "assistant", "system"), text())
            .as((role, content) -> Map.<String, Object>of("role", role, "content", content))
            .list()
            .ofMinSize(1)
            .ofMaxSize(3)
            .map(
                ms -> {
                  List<Map<String, Object>> out = new ArrayList<>(ms);
                  out.set(0, Map.of("role", "user", "content", ms.get(0).get("content")));
                  return out;
                });
    return text()
        .list()
        .ofMaxSize(2)
        .list()
        .ofMinSize(1)
        .ofMaxSize(3)
        .flatMap(pool -> requests(Arbitraries.of(pool), tools, rest));
  }

  private static Arbitrary<List<Request>> requests(
      Arbitrary<List<String>> systems,
      Arbitrary<List<Map<String, Object>>> tools,
      Arbitrary<List<Map<String, Object>>> rest) {
    Arbitrary<Request> request =
        Combinators.combine(systems, tools, rest)
            .as(
                (system, tool, others) -> {
                  List<Map<String, Object>> messages = new ArrayList<>();
                  for (String content : system) {
                    messages.add(Map.of("role", "system", "content", content));
                  }
                  messages.addAll(others);
                  return new Request(messages, tool);
                });
    return request.list().ofMinSize(2).ofMaxSize(8);
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
