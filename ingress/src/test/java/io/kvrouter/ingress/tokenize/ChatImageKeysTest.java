package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.api.ApiException;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.TokenizedPrompt;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.protocol.keys.MediaPrompt;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ingress keys a chat's image blocks as the engine hashes them: the image's placeholder tokens
 * sit in front of the message text (vLLM's string content format), and the image's identifier
 * enters every block they overlap; text-only chats are keyed as before.
 */
class ChatImageKeysTest {

  private static final String MODEL = "kvrouter-demo";
  private static TokenizerRegistry registry;
  private static ModelTokenizer demo;
  private static final BlockKeys KEYS = BlockKeys.of(MODEL, 16);

  @BeforeAll
  static void load() {
    registry = TokenizerRegistry.fromConfig(ConfigFactory.load());
    demo = registry.get(MODEL);
  }

  @AfterAll
  static void close() {
    registry.close();
  }

  static String dataUrl(String payload) {
    return "data:image/png;base64,"
        + Base64.getEncoder().encodeToString(payload.getBytes(StandardCharsets.UTF_8));
  }

  static List<Map<String, Object>> chat(String imageUrl, String uuid, String question) {
    List<Object> parts = new ArrayList<>();
    if (imageUrl != null) {
      Map<String, Object> image = new HashMap<>();
      image.put("type", "image_url");
      image.put("image_url", Map.of("url", imageUrl));
      if (uuid != null) {
        image.put("uuid", uuid);
      }
      parts.add(image);
    }
    parts.add(Map.of("type", "text", "text", question));
    return List.of(Map.of("role", "user", "content", parts));
  }

  static InferenceRequest request(List<Map<String, Object>> messages) {
    return new InferenceRequest(
        Endpoint.CHAT, MODEL, false, 8, null, null, messages, null, Map.of(), null);
  }

  /** The request's token ids and router keys, as the ingress computes them. */
  record Keyed(int[] tokens, long[] keys) {}

  static Keyed keyed(List<Map<String, Object>> messages) {
    InferenceRequest r = request(messages);
    int[] tokens =
        TokenizedPrompt.of(r, demo, (t, q) -> t.encodeChat(q.messages(), null, true, Map.of()));
    ExtraKeys extras =
        MediaPrompt.keyExtras(
            ExtraKeys.NONE,
            TokenizedPrompt.images(r),
            tokens,
            demo.images(),
            demo.images().modelId(MODEL));
    return new Keyed(tokens, KEYS.keys(tokens, extras));
  }

  @Test
  void placeholdersSitInFrontOfTheQuestion_asVllmsStringFormat() {
    Keyed k = keyed(chat(dataUrl("cat"), null, "What is this?"));
    int[] head = demo.tokenizer().encode("<|im_start|>user\n", false);
    int n = demo.images().imageTokens();
    assertThat(Arrays.copyOf(k.tokens(), head.length)).isEqualTo(head);
    for (int i = head.length; i < head.length + n; i++) {
      assertThat(k.tokens()[i]).isEqualTo(demo.images().imageTokenId());
    }
    int[] tail =
        demo.tokenizer().encode("\nWhat is this?<|im_end|>\n<|im_start|>assistant\n", false);
    assertThat(Arrays.copyOfRange(k.tokens(), head.length + n, k.tokens().length)).isEqualTo(tail);
  }

  @Test
  void sameImageSameKeys_otherImageOtherKeysFromItsFirstBlock() {
    Keyed a = keyed(chat(dataUrl("cat"), null, "What is this?"));
    Keyed again = keyed(chat(dataUrl("cat"), null, "What is this?"));
    Keyed dog = keyed(chat(dataUrl("dog"), null, "What is this?"));
    Keyed otherQuestion = keyed(chat(dataUrl("cat"), null, "How old is it? Tell me more."));
    assertThat(again.keys()).isEqualTo(a.keys());
    assertThat(dog.tokens()).isEqualTo(a.tokens());
    // the image starts in block 0: every block differs
    for (int b = 0; b < a.keys().length; b++) {
      assertThat(dog.keys()[b]).as("block %d", b).isNotEqualTo(a.keys()[b]);
    }
    // another question after the same image shares the blocks the image fills
    int imageBlocks = (5 + demo.images().imageTokens()) / 16;
    assertThat(Arrays.copyOf(otherQuestion.keys(), imageBlocks))
        .isEqualTo(Arrays.copyOf(a.keys(), imageBlocks));
  }

  @Test
  void uuidNamesTheImage_whateverItsBytes() {
    Keyed a = keyed(chat(dataUrl("cat"), "photo-1", "What is this?"));
    Keyed b = keyed(chat(dataUrl("other bytes"), "photo-1", "What is this?"));
    assertThat(b.keys()).isEqualTo(a.keys());
    int start = demo.tokenizer().encode("<|im_start|>user\n", false).length;
    assertThat(a.keys())
        .isEqualTo(
            KEYS.keys(
                a.tokens(),
                ExtraKeys.NONE.withMedia("photo-1", start, demo.images().imageTokens())));
  }

  @Test
  void textOnlyChatsAreKeyedAsBefore() {
    List<Map<String, Object>> text = chat(null, null, "What is this?");
    Keyed k = keyed(text);
    assertThat(k.keys()).isEqualTo(KEYS.keys(k.tokens(), ExtraKeys.NONE));
    assertThat(k.tokens())
        .isEqualTo(
            demo.tokenizer()
                .encode(
                    "<|im_start|>user\nWhat is this?<|im_end|>\n<|im_start|>assistant\n", false));
  }

  @Test
  void badImagePartsAre400s() {
    assertThatThrownBy(() -> keyed(chat("data:image/png;base64,@@@", null, "q")))
        .isInstanceOfSatisfying(
            ApiException.class,
            e -> {
              assertThat(e.error().status()).isEqualTo(400);
              assertThat(e.error().code()).isEqualTo("invalid_image");
            });
    List<Map<String, Object>> noUrl =
        List.of(
            Map.of(
                "role",
                "user",
                "content",
                List.of(Map.of("type", "image_url", "image_url", Map.of()))));
    assertThatThrownBy(() -> keyed(noUrl))
        .isInstanceOfSatisfying(
            ApiException.class, e -> assertThat(e.error().message()).contains("image_url.url"));
  }
}
