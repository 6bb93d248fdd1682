package io.kvrouter.ingress.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link BodyReader}'s byte-level fast path gives what decoding to a string and parsing that gives:
 * the same tree for a valid body, the same error code for an invalid one (Jackson's byte parser
 * words a few messages differently), and bodies that are not plain ASCII without NUL still go
 * through the strict decoder.
 */
class BodyReaderTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper STRICT =
      JSON.copy().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  private final BodyReader reader = new BodyReader(JSON);

  @Property(tries = 300)
  void asciiBodies_parseAsTheirString(@ForAll("bodies") String body) throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    if (bytes.length == 0) {
      assertThatThrownBy(() -> reader.read(bytes))
          .isInstanceOfSatisfying(
              ApiException.class, a -> assertThat(a.error().code()).isEqualTo("empty_body"));
      return;
    }
    JsonNode expected;
    try {
      expected = STRICT.readTree(body);
    } catch (Exception e) {
      assertThatThrownBy(() -> reader.read(bytes))
          .isInstanceOfSatisfying(
              ApiException.class,
              a -> {
                assertThat(a.error().code()).isEqualTo("invalid_json");
                assertThat(a.error().message()).startsWith("The request body is not valid JSON");
              });
      return;
    }
    assertThat(reader.read(bytes)).isEqualTo(expected);
  }

  @Provide
  Arbitrary<String> bodies() {
    Arbitrary<String> text = Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(40);
    Arbitrary<String> valid =
        Arbitraries.of("{\"a\":%s}", "[%s,1.5e3,-7]", "{\"m\":[{\"r\":%s}],\"x\":null}")
            .flatMap(f -> text.map(t -> String.format(f, JSON.valueToTree(t).toString())));
    Arbitrary<String> broken = text.map(t -> "{\"a\":" + t);
    return Arbitraries.oneOf(valid, broken, text);
  }

  @Example
  void utf16Json_isNotTakenForUtf8() {
    // valid JSON in UTF-16: zero bytes Jackson's own detection would read as UTF-16
    byte[] utf16 = "{\"model\":\"m\"}".getBytes(StandardCharsets.UTF_16BE);
    assertThatThrownBy(() -> reader.read(utf16))
        .isInstanceOfSatisfying(
            ApiException.class, a -> assertThat(a.error().code()).isEqualTo("invalid_json"));
  }

  @Example
  void invalidUtf8_isRejectedAsEncoding() {
    byte[] bad = {'{', '"', 'a', '"', ':', '"', (byte) 0xC3, '"', '}'};
    assertThatThrownBy(() -> reader.read(bad))
        .isInstanceOfSatisfying(
            ApiException.class, a -> assertThat(a.error().code()).isEqualTo("invalid_encoding"));
  }

  @Example
  void utf8Text_stillReads() {
    assertThat(reader.read("{\"a\":\"é 日本\"}".getBytes(StandardCharsets.UTF_8)).path("a").asText())
        .isEqualTo("é 日本");
  }

  @Property(tries = 200)
  void asciiCheck_findsAnyNonAsciiOrNulByteAnywhere(
      @ForAll("lengths") int length, @ForAll("positions") int position, @ForAll boolean nul) {
    byte[] bytes = new byte[length];
    java.util.Arrays.fill(bytes, (byte) 'x');
    assertThat(BodyReader.asciiWithoutNul(bytes)).isTrue();
    bytes[position % length] = nul ? 0 : (byte) 0x80;
    assertThat(BodyReader.asciiWithoutNul(bytes)).isFalse();
  }

  @Provide
  Arbitrary<Integer> lengths() {
    return Arbitraries.integers().between(1, 40);
  }

  @Provide
  Arbitrary<Integer> positions() {
    return Arbitraries.integers().between(0, 1000);
  }
}
