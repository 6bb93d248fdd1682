package io.kvrouter.ingress.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link JsonValues#map} gives the values Jackson's {@code convertValue} gave before it, types
 * included (Integer, Long, BigInteger, Double), on random parsed JSON objects.
 */
class JsonValuesTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Property(tries = 300)
  void map_equalsConvertValue(@ForAll("objects") String text) throws Exception {
    JsonNode node = JSON.readTree(text);
    Map<String, Object> expected = JSON.convertValue(node, new TypeReference<>() {});
    Map<String, Object> actual = JsonValues.map(node);
    assertThat(actual).isEqualTo(expected);
    assertThat(typesOf(actual)).isEqualTo(typesOf(expected));
  }

  private static String typesOf(Object v) {
    if (v instanceof Map<?, ?> m) {
      StringBuilder sb = new StringBuilder("{");
      m.forEach((k, x) -> sb.append(k).append(':').append(typesOf(x)).append(','));
      return sb.append('}').toString();
    }
    if (v instanceof java.util.List<?> l) {
      StringBuilder sb = new StringBuilder("[");
      l.forEach(x -> sb.append(typesOf(x)).append(','));
      return sb.append(']').toString();
    }
    return v == null ? "null" : v.getClass().getSimpleName();
  }

  @Provide
  Arbitrary<String> objects() {
    return value(3).list().ofMaxSize(5).map(JsonValuesTest::object);
  }

  private static String object(java.util.List<String> values) {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < values.size(); i++) {
      sb.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":").append(values.get(i));
    }
    return sb.append('}').toString();
  }

  private static Arbitrary<String> value(int depth) {
    Arbitrary<String> leaf =
        Arbitraries.oneOf(
            Arbitraries.integers().map(String::valueOf),
            Arbitraries.longs().map(String::valueOf),
            Arbitraries.bigIntegers()
                .between(
                    java.math.BigInteger.TEN.pow(20).negate(), java.math.BigInteger.TEN.pow(20))
                .map(String::valueOf),
            Arbitraries.doubles().map(String::valueOf),
            Arbitraries.of("true", "false", "null", "1e400", "-0.0", "2.50"),
            Arbitraries.strings().ofMaxLength(8).map(s -> JSON.valueToTree(s).toString()));
    if (depth == 0) {
      return leaf;
    }
    return Arbitraries.oneOf(
        leaf,
        leaf,
        value(depth - 1).list().ofMaxSize(3).map(l -> "[" + String.join(",", l) + "]"),
        value(depth - 1).list().ofMaxSize(3).map(JsonValuesTest::object));
  }
}
