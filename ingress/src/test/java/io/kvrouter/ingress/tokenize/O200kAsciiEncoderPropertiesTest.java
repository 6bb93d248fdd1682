package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import java.util.List;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@link O200kAsciiEncoder} against jtokkit's o200k_base (the reference: tiktoken's pattern run by
 * {@code java.util.regex}) on ASCII strings drawn to reach every alternative of the pattern: case
 * runs, contractions in both cases, digit runs, punctuation runs with trailing line breaks and
 * slashes, white-space runs with and without line breaks, control characters.
 */
class O200kAsciiEncoderPropertiesTest {

  private static final O200kAsciiEncoder FAST = O200kAsciiEncoder.load();
  private static final Encoding REFERENCE =
      Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);

  @Property(tries = 3000)
  void anyAsciiText_encodesToJtokkitsIds(@ForAll("asciiText") String text) {
    assertThat(FAST.encode(text)).containsExactly(REFERENCE.encodeOrdinary(text).toArray());
  }

  @Property(tries = 300)
  void longWordLikeText_encodesToJtokkitsIds(@ForAll("words") String text) {
    assertThat(FAST.encode(text)).containsExactly(REFERENCE.encodeOrdinary(text).toArray());
  }

  @Test
  void textWithACharAboveAscii_isLeftToJtokkit() {
    assertThat(FAST.encode("Grüße")).isNull();
    assertThat(FAST.encode("")).isEmpty();
  }

  @Test
  void characterClasses_agreeWithTheRegexEngine() {
    Pattern letter = Pattern.compile("\\p{L}", Pattern.UNICODE_CHARACTER_CLASS);
    Pattern digit = Pattern.compile("\\p{N}", Pattern.UNICODE_CHARACTER_CLASS);
    Pattern space = Pattern.compile("\\s", Pattern.UNICODE_CHARACTER_CLASS);
    for (char c = 0; c < 128; c++) {
      String s = String.valueOf(c);
      // Each single char is one piece; the piece ids must agree, which they only do if the
      // classes agree (a space alone, a digit alone, a letter alone, an "other" alone).
      assertThat(FAST.encode(s + "a" + s + "1" + s + " " + s + s))
          .as(
              "char %d (letter %s, digit %s, space %s)",
              (int) c,
              letter.matcher(s).matches(),
              digit.matcher(s).matches(),
              space.matcher(s).matches())
          .containsExactly(REFERENCE.encodeOrdinary(s + "a" + s + "1" + s + " " + s + s).toArray());
    }
  }

  @Provide
  Arbitrary<String> asciiText() {
    List<String> atoms =
        List.of(
            "a",
            "b",
            "z",
            "A",
            "Q",
            "Z",
            "Hello",
            "WORLD",
            "camelCase",
            "'s",
            "'S",
            "'t",
            "'re",
            "'VE",
            "'m",
            "'ll",
            "'Ll",
            "'d",
            "'x",
            "'",
            "0",
            "7",
            "12345",
            " ",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\r",
            " \n ",
            "\u000B",
            "\f",
            ".",
            ",",
            "!",
            "?",
            "...",
            "/",
            "//",
            "-",
            "_",
            "(",
            ")",
            "{",
            "\"",
            "<|im_start|>",
            "\u0000",
            "\u0001",
            "\u001C",
            "\u001F",
            "\u007F",
            "~",
            "@",
            "#",
            "$",
            "%",
            "^",
            "&",
            "*",
            "=",
            "+",
            "\\",
            "|",
            "`",
            ";",
            ":");
    Arbitrary<String> atom = Arbitraries.of(atoms);
    Arbitrary<String> anyChar =
        Arbitraries.chars().range((char) 0, (char) 127).map(String::valueOf);
    return Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(4, atom), net.jqwik.api.Tuple.of(1, anyChar))
        .list()
        .ofMinSize(0)
        .ofMaxSize(40)
        .map(parts -> String.join("", parts));
  }

  @Provide
  Arbitrary<String> words() {
    Arbitrary<String> word =
        Arbitraries.strings()
            .withChars("abcdefghijklmnopqrstuvwxyzABCDE'")
            .ofMinLength(1)
            .ofMaxLength(24);
    return word.list().ofMinSize(1).ofMaxSize(200).map(w -> String.join(" ", w));
  }
}
