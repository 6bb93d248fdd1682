package io.kvrouter.ingress.tokenize;

import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Serializes template values to JSON text exactly as Python's {@code json.dumps} does, which is
 * what Hugging Face chat templates get from {@code tojson}: transformers replaces jinja2's filter
 * with {@code json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
 * sort_keys=sort_keys)} (see {@code transformers.utils.chat_template_utils}), so keys keep their
 * insertion order, separators default to {@code ", "} and {@code ": "}, and nothing is
 * HTML-escaped. Token ids of tool definitions depend on every byte of this text.
 *
 * <p>Maps become objects (keys converted as Python does: strings as they are, {@code true}, {@code
 * false}, {@code null} and numbers as their JSON text), lists, collections and arrays become
 * arrays, floats use Python's {@code repr} ({@code 1.0}, {@code 1e-05}, {@code 1e+16}), anything
 * else is written as the string of its {@code toString()}.
 *
 * <p>Stateless and thread-safe; cost is linear in the size of the value.
 */
final class PythonJson {

  private PythonJson() {}

  /** {@code json.dumps} options that templates pass to {@code tojson}. */
  record Options(
      Integer indent,
      String itemSeparator,
      String keySeparator,
      boolean sortKeys,
      boolean ensureAscii) {

    /** The options of {@code tojson} with no arguments. */
    static final Options DEFAULT = new Options(null, ", ", ": ", false, false);
  }

  /** Returns the JSON text of {@code value}. */
  static String dumps(Object value, Options options) {
    StringBuilder sb = new StringBuilder();
    write(sb, value, options, 0);
    return sb.toString();
  }

  private static void write(StringBuilder sb, Object v, Options o, int level) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Boolean b) {
      sb.append(b ? "true" : "false");
    } else if (v instanceof Number num) {
      sb.append(number(num));
    } else if (v instanceof CharSequence cs) {
      string(sb, cs.toString(), o.ensureAscii());
    } else if (v instanceof Map<?, ?> map) {
      List<Map.Entry<String, Object>> entries = new ArrayList<>(map.size());
      for (Map.Entry<?, ?> e : map.entrySet()) {
        entries.add(Map.entry(key(e.getKey()), e.getValue() == null ? NULL : e.getValue()));
      }
      if (o.sortKeys()) {
        entries.sort(Map.Entry.comparingByKey());
      }
      if (entries.isEmpty()) {
        sb.append("{}");
        return;
      }
      sb.append('{');
      boolean first = true;
      for (Map.Entry<String, Object> e : entries) {
        separate(sb, o, level + 1, first);
        first = false;
        string(sb, e.getKey(), o.ensureAscii());
        sb.append(o.keySeparator());
        write(sb, e.getValue() == NULL ? null : e.getValue(), o, level + 1);
      }
      close(sb, o, level, '}');
    } else if (v instanceof Iterable<?> || v.getClass().isArray()) {
      List<Object> items = new ArrayList<>();
      if (v instanceof Iterable<?> it) {
        it.forEach(items::add);
      } else {
        for (int i = 0, n = Array.getLength(v); i < n; i++) {
          items.add(Array.get(v, i));
        }
      }
      if (items.isEmpty()) {
        sb.append("[]");
        return;
      }
      sb.append('[');
      boolean first = true;
      for (Object item : items) {
        separate(sb, o, level + 1, first);
        first = false;
        write(sb, item, o, level + 1);
      }
      close(sb, o, level, ']');
    } else {
      string(sb, v.toString(), o.ensureAscii());
    }
  }

  private static final Object NULL = new Object();

  private static void separate(StringBuilder sb, Options o, int level, boolean first) {
    if (o.indent() == null) {
      if (!first) {
        sb.append(o.itemSeparator());
      }
      return;
    }
    if (!first) {
      sb.append(o.itemSeparator());
    }
    sb.append('\n').append(" ".repeat(o.indent() * level));
  }

  private static void close(StringBuilder sb, Options o, int level, char bracket) {
    if (o.indent() != null) {
      sb.append('\n').append(" ".repeat(o.indent() * level));
    }
    sb.append(bracket);
  }

  private static String key(Object k) {
    if (k == null) {
      return "null";
    }
    if (k instanceof Boolean || k instanceof Number) {
      return k instanceof Number num ? number(num) : k.toString();
    }
    return k.toString();
  }

  private static String number(Number num) {
    if (num instanceof Double || num instanceof Float) {
      return pythonFloat(num.doubleValue());
    }
    if (num instanceof BigDecimal bd) {
      return pythonFloat(bd.doubleValue());
    }
    if (num instanceof BigInteger
        || num instanceof Long
        || num instanceof Integer
        || num instanceof Short
        || num instanceof Byte) {
      return num.toString();
    }
    return pythonFloat(num.doubleValue());
  }

  /** Python's {@code repr(float)} as {@code json.dumps} writes it. */
  static String pythonFloat(double d) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "Infinity" : "-Infinity";
    }
    if (d == 0) {
      return (1 / d < 0) ? "-0.0" : "0.0";
    }
    BigDecimal bd = new BigDecimal(Double.toString(d)).stripTrailingZeros();
    String digits = bd.unscaledValue().abs().toString();
    int exponent = digits.length() - 1 - bd.scale();
    String sign = d < 0 ? "-" : "";
    if (exponent < -4 || exponent >= 16) {
      String mantissa =
          digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
      String exp = String.format("%02d", Math.abs(exponent));
      return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + exp;
    }
    String plain = bd.abs().toPlainString();
    return sign + (plain.contains(".") ? plain : plain + ".0");
  }

  private static void string(StringBuilder sb, String s, boolean ensureAscii) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '\b' -> sb.append("\\b");
        case '\f' -> sb.append("\\f");
        default -> {
          if (c < 0x20 || (ensureAscii && c > 0x7f)) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
