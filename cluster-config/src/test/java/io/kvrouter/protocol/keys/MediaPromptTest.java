package io.kvrouter.protocol.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.commons.codec.digest.Blake3;
import org.junit.jupiter.api.Test;

class MediaPromptTest {

  private static final MediaPrompt.Settings FOUR = new MediaPrompt.Settings(4, 999, null);

  static String dataUrl(String payload) {
    return "data:image/png;base64,"
        + Base64.getEncoder().encodeToString(payload.getBytes(StandardCharsets.UTF_8));
  }

  static Map<String, Object> imagePart(String url) {
    return Map.of("type", "image_url", "image_url", Map.of("url", url));
  }

  /** One token per char, so positions are easy to read. */
  private static int[] chars(String s) {
    return s.chars().toArray();
  }

  @Test
  void blake3IsTheStandardOne() {
    // The BLAKE3 paper's test vector for the empty input.
    assertThat(HexFormat.of().formatHex(Blake3.initHash().doFinalize(32)))
        .isEqualTo("af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
  }

  @Test
  void dataUrlIdentifierIsBlake3OfModelIdThenImageBytes() {
    byte[] concatenated = "model_idQwen/Qwen2-VLimagePNGDATA".getBytes(StandardCharsets.UTF_8);
    String expected = HexFormat.of().formatHex(Blake3.hash(concatenated));
    MediaPrompt.Image image = MediaPrompt.image(imagePart(dataUrl("PNGDATA")));
    assertThat(MediaPrompt.identifier(image, "Qwen/Qwen2-VL")).isEqualTo(expected);
  }

  @Test
  void uuidIsTheIdentifierAsItIs() {
    Map<String, Object> part =
        Map.of("type", "image_url", "image_url", Map.of("url", dataUrl("x")), "uuid", "cat-42");
    assertThat(MediaPrompt.identifier(MediaPrompt.image(part), "m")).isEqualTo("cat-42");
  }

  @Test
  void sameImageSameIdentifierOtherImageOrModelOther() {
    String a = MediaPrompt.identifier(MediaPrompt.image(imagePart(dataUrl("A"))), "m");
    assertThat(MediaPrompt.identifier(MediaPrompt.image(imagePart(dataUrl("A"))), "m"))
        .isEqualTo(a);
    assertThat(MediaPrompt.identifier(MediaPrompt.image(imagePart(dataUrl("B"))), "m"))
        .isNotEqualTo(a);
    assertThat(MediaPrompt.identifier(MediaPrompt.image(imagePart(dataUrl("A"))), "n"))
        .isNotEqualTo(a);
  }

  @Test
  void badImagePartsSayWhatIsWrong() {
    assertThatThrownBy(() -> MediaPrompt.image(Map.of("type", "image_url")))
        .isInstanceOf(MediaPrompt.BadImageException.class)
        .hasMessageContaining("image_url.url");
    assertThatThrownBy(() -> MediaPrompt.image(imagePart("data:image/png;base64,%%%")))
        .isInstanceOf(MediaPrompt.BadImageException.class)
        .hasMessageContaining("base64");
    assertThatThrownBy(() -> MediaPrompt.image(imagePart("data:image/png,abc")))
        .isInstanceOf(MediaPrompt.BadImageException.class);
    assertThatThrownBy(() -> MediaPrompt.image(Map.of("type", "image_url", "image_url", "")))
        .isInstanceOf(MediaPrompt.BadImageException.class);
    // a URL the engine fetches is the engine's to accept or refuse
    assertThat(MediaPrompt.image(imagePart("file:///media/cat.png")).url())
        .isEqualTo("file:///media/cat.png");
    assertThat(MediaPrompt.image(Map.of("type", "text", "text", "hi"))).isNull();
  }

  @Test
  void flattenPutsImagesFirstAsVllmsStringFormat() {
    List<Object> parts =
        List.of(
            Map.of("type", "text", "text", "what is"),
            imagePart(dataUrl("A")),
            Map.of("type", "text", "text", "this?"));
    assertThat(MediaPrompt.flatten(parts)).isEqualTo(MediaPrompt.MARKER + "\nwhat is\nthis?");
    assertThat(MediaPrompt.flatten(List.of(Map.of("type", "text", "text", "only"))))
        .isEqualTo("only");
  }

  @Test
  void expandInsertsPlaceholdersWhereTheMarkersSitAndLocateFindsThem() {
    String rendered = "ab" + MediaPrompt.MARKER + "cd" + MediaPrompt.MARKER + MediaPrompt.MARKER;
    int[] tokens = MediaPrompt.expand(rendered, FOUR, MediaPromptTest::chars);
    assertThat(tokens)
        .containsExactly(
            'a', 'b', 999, 999, 999, 999, 'c', 'd', 999, 999, 999, 999, 999, 999, 999, 999);
    assertThat(MediaPrompt.locate(tokens, List.of("x", "y", "z"), FOUR))
        .containsExactly(
            new MediaPrompt.Item("x", 2, 4),
            new MediaPrompt.Item("y", 8, 4),
            new MediaPrompt.Item("z", 12, 4));
    assertThat(MediaPrompt.expand("plain", FOUR, MediaPromptTest::chars)).isEqualTo(chars("plain"));
  }

  @Test
  void locateRefusesAPromptWithoutAllItsImages() {
    int[] tokens = MediaPrompt.expand("ab" + MediaPrompt.MARKER, FOUR, MediaPromptTest::chars);
    assertThatThrownBy(() -> MediaPrompt.locate(tokens, List.of("x", "y"), FOUR))
        .isInstanceOf(MediaPrompt.BadImageException.class);
    assertThat(MediaPrompt.locate(chars("abc"), List.of(), FOUR)).isEmpty();
  }

  @Test
  void itemsEnterTheBlocksTheyOverlap() {
    int[] tokens =
        MediaPrompt.expand("ab" + MediaPrompt.MARKER + "cdefghij", FOUR, MediaPromptTest::chars);
    BlockKeys keys = BlockKeys.of("m", 4);
    long[] plain = keys.keys(tokens, ExtraKeys.NONE);
    long[] withA =
        keys.keys(
            tokens,
            MediaPrompt.withItems(ExtraKeys.NONE, MediaPrompt.locate(tokens, List.of("A"), FOUR)));
    long[] withB =
        keys.keys(
            tokens,
            MediaPrompt.withItems(ExtraKeys.NONE, MediaPrompt.locate(tokens, List.of("B"), FOUR)));
    // the image covers tokens 2..5: blocks 0 and 1 differ, block 2 onwards chain on them
    assertThat(withA[0]).isNotEqualTo(plain[0]);
    assertThat(withA).doesNotContain(plain);
    assertThat(withA[0]).isNotEqualTo(withB[0]);
    assertThat(
            keys.keys(
                tokens,
                MediaPrompt.withItems(
                    ExtraKeys.NONE, MediaPrompt.locate(tokens, List.of("A"), FOUR))))
        .isEqualTo(withA);
  }
}
