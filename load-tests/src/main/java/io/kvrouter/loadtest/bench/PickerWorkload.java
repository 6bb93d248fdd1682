package io.kvrouter.loadtest.bench;

import io.kvrouter.ingress.tokenize.ChatMlTemplate;
import io.kvrouter.ingress.tokenize.PromptTokenizer;
import io.kvrouter.ingress.tokenize.TiktokenPromptTokenizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Chat request bodies of about {@code tokens} prompt tokens for the endpoint-picker bench, shaped
 * as a shared-prefix workload: request {@code i} belongs to group {@code i mod groups}, whose
 * system message (about {@code prefixShare} of the tokens, the same for every request of the group)
 * is followed by a user message of {@link PseudoWords} unique to the request. So every body
 * differs, and prompts of a group share a long prefix, as many users of one application do.
 *
 * <p>Sizes are in o200k tokens (the demo model's tokenizer): the words per token of {@link
 * PseudoWords} are measured once on a sample, and word counts follow from it; the chat template
 * adds a few tokens.
 *
 * <p>Cost: the group prefixes are built up front (groups × prefix words); each {@link #body} builds
 * its user message and encodes the JSON, O(tokens) time and bytes. Not thread-safe.
 */
final class PickerWorkload {

  private static final int SAMPLE_WORDS = 2000;

  private final PromptTokenizer o200k = TiktokenPromptTokenizer.forEncoding("o200k_base");
  private final String model;
  private final String[] prefixes;
  private final int suffixWords;
  private final long seed;

  PickerWorkload(String model, int tokens, int groups, double prefixShare, long seed) {
    if (tokens < 16 || groups < 1 || !(prefixShare >= 0 && prefixShare < 1)) {
      throw new IllegalArgumentException(
          "need tokens >= 16, groups >= 1, 0 <= prefixShare < 1; got "
              + tokens
              + ", "
              + groups
              + ", "
              + prefixShare);
    }
    double tokensPerWord =
        o200k.encode(PseudoWords.words(seed, SAMPLE_WORDS), false).length / (double) SAMPLE_WORDS;
    int words = (int) Math.round(tokens / tokensPerWord);
    int prefixWords = (int) Math.round(words * prefixShare);
    this.model = model;
    this.suffixWords = Math.max(1, words - prefixWords);
    this.seed = seed;
    this.prefixes = new String[groups];
    for (int g = 0; g < groups; g++) {
      prefixes[g] = PseudoWords.words(PseudoWords.mix(seed, 1, g), prefixWords);
    }
  }

  /** The JSON body of request {@code i}: {@code POST /v1/chat/completions}, streaming. */
  byte[] body(long i) {
    return RequestBodyEncoder.encode(
        new BenchRequest(0, model, prompt(i), 16, ""), model, BenchEndpoint.CHAT, false);
  }

  /** Prompt tokens of request {@code i} as the picker counts them (ChatML, o200k). */
  int promptTokens(long i) {
    List<Map<String, Object>> messages = new ArrayList<>();
    for (BenchPrompt.ChatMessage m : ((BenchPrompt.Chat) prompt(i)).messages()) {
      messages.add(Map.of("role", m.role(), "content", m.content()));
    }
    return o200k.encode(ChatMlTemplate.INSTANCE.render(messages, null, true, Map.of()), false)
        .length;
  }

  private BenchPrompt prompt(long i) {
    String question =
        "question " + i + " " + PseudoWords.words(PseudoWords.mix(seed, 2, i), suffixWords);
    return BenchPrompt.chat(
        List.of(
            new BenchPrompt.ChatMessage("system", prefixes[(int) (i % prefixes.length)]),
            new BenchPrompt.ChatMessage("user", question)));
  }
}
