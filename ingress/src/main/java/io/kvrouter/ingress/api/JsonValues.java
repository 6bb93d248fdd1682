package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.POJONode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parsed JSON tree as plain Java values, as chat templates read them: objects as {@link
 * LinkedHashMap} (keys in the order sent), arrays as {@link ArrayList}, strings, numbers as the
 * tree holds them ({@code Integer}, {@code Long} or {@code BigInteger} for integers by size, {@code
 * Double} for the others), booleans and {@code null}: the same values Jackson's {@code
 * convertValue(node, Map.class)} gives ({@code JsonValuesTest} checks that on random trees), but
 * walked directly, where {@code convertValue} writes the tree into a token buffer and parses it
 * back (most of the validation time of a long chat turn went there).
 */
public final class JsonValues {

  private JsonValues() {}

  /** The object {@code node} as a map. */
  public static Map<String, Object> map(JsonNode node) {
    if (!node.isObject()) {
      throw new IllegalArgumentException("not a JSON object: " + node.getNodeType());
    }
    Map<String, Object> out = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      out.put(e.getKey(), plain(e.getValue()));
    }
    return out;
  }

  /** Each object of the array {@code node} as a map, in an unmodifiable list. */
  public static List<Map<String, Object>> maps(JsonNode node) {
    List<Map<String, Object>> out = new ArrayList<>(node.size());
    for (JsonNode n : node) {
      out.add(map(n));
    }
    return List.copyOf(out);
  }

  /** Any JSON value as a plain Java value. */
  public static Object plain(JsonNode node) {
    return switch (node.getNodeType()) {
      case OBJECT -> map(node);
      case ARRAY -> {
        List<Object> out = new ArrayList<>(node.size());
        for (JsonNode n : node) {
          out.add(plain(n));
        }
        yield out;
      }
      case STRING -> node.textValue();
      case NUMBER -> node.numberValue();
      case BOOLEAN -> node.booleanValue();
      case POJO -> ((POJONode) node).getPojo();
      case BINARY -> binary(node);
      case NULL, MISSING -> null;
    };
  }

  private static Object binary(JsonNode node) {
    try {
      return node.binaryValue();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
