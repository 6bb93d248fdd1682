package io.kvrouter.ingress.tokenize;

import java.lang.reflect.Array;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Global functions that Hugging Face chat templates call and jinjava lacks, registered by {@link
 * HfJinjava}: {@code raise_exception(message)} (transformers defines it for templates to reject bad
 * input) and {@code strftime_now(format)} (Llama 3 templates print today's date with it), both from
 * {@code transformers.utils.chat_template_utils}; and {@code py_slice}, the target of {@link
 * JinjaSourceRewriter}'s slice rewrite.
 *
 * <p>Static methods because jinjava binds functions to static methods. Thread-safe; each call costs
 * O(size of its result).
 */
final class TemplateFunctions {

  private TemplateFunctions() {}

  /**
   * Aborts rendering; {@link JinjaChatTemplate} reports the message as a {@link
   * ChatTemplateException}.
   *
   * @throws ChatTemplateException always
   */
  public static Object raiseException(Object message) {
    throw new ChatTemplateException(String.valueOf(message));
  }

  /**
   * Python's {@code datetime.now().strftime(format)} in the JVM's time zone, for the directives
   * templates use: {@code %d %m %y %Y %H %I %M %S %p %b %B %a %A %j %%}. Other directives are
   * copied as they are.
   */
  public static String strftimeNow(Object format) {
    return strftime(LocalDateTime.now(), String.valueOf(format));
  }

  /** {@link #strftimeNow} for a given time. */
  static String strftime(LocalDateTime t, String format) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < format.length(); i++) {
      char c = format.charAt(i);
      if (c != '%' || i + 1 == format.length()) {
        sb.append(c);
        continue;
      }
      char d = format.charAt(++i);
      String pattern =
          switch (d) {
            case 'd' -> "dd";
            case 'm' -> "MM";
            case 'y' -> "yy";
            case 'Y' -> "yyyy";
            case 'H' -> "HH";
            case 'I' -> "hh";
            case 'M' -> "mm";
            case 'S' -> "ss";
            case 'p' -> "a";
            case 'b' -> "MMM";
            case 'B' -> "MMMM";
            case 'a' -> "EEE";
            case 'A' -> "EEEE";
            case 'j' -> "DDD";
            default -> null;
          };
      if (d == '%') {
        sb.append('%');
      } else if (pattern == null) {
        sb.append('%').append(d);
      } else {
        sb.append(DateTimeFormatter.ofPattern(pattern, Locale.ENGLISH).format(t));
      }
    }
    return sb.toString();
  }

  /**
   * Python's {@code seq[start:stop:step]} on a list, array or string; {@code null} bounds mean
   * "omitted". Negative indices count from the end; out-of-range bounds are clamped, as {@code
   * slice.indices} does.
   *
   * @return a new list (for list or array input) or string; {@code null} for {@code null} input
   * @throws IllegalArgumentException if step is zero or the value cannot be sliced
   */
  public static Object pySlice(Object seq, Object start, Object stop, Object step) {
    if (seq == null) {
      return null;
    }
    int st = step == null ? 1 : toInt(step, "step");
    if (st == 0) {
      throw new IllegalArgumentException("slice step cannot be zero");
    }
    if (seq instanceof CharSequence cs) {
      String s = cs.toString();
      int[] cps = s.codePoints().toArray();
      StringBuilder sb = new StringBuilder();
      for (int idx : indices(cps.length, start, stop, st)) {
        sb.appendCodePoint(cps[idx]);
      }
      return sb.toString();
    }
    List<Object> items = asList(seq);
    List<Object> out = new ArrayList<>();
    for (int idx : indices(items.size(), start, stop, st)) {
      out.add(items.get(idx));
    }
    return out;
  }

  private static List<Object> asList(Object seq) {
    if (seq instanceof List<?> list) {
      return new ArrayList<>(list);
    }
    if (seq instanceof Collection<?> c) {
      return new ArrayList<>(c);
    }
    if (seq.getClass().isArray()) {
      int n = Array.getLength(seq);
      List<Object> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(Array.get(seq, i));
      }
      return out;
    }
    throw new IllegalArgumentException("cannot slice a " + seq.getClass().getSimpleName());
  }

  /** The indices {@code slice(start, stop, step).indices(length)} visits, in order. */
  private static int[] indices(int length, Object start, Object stop, int step) {
    int lo;
    int hi;
    if (step > 0) {
      lo = start == null ? 0 : clamp(toInt(start, "start"), length, 0, length);
      hi = stop == null ? length : clamp(toInt(stop, "stop"), length, 0, length);
    } else {
      lo = start == null ? length - 1 : clamp(toInt(start, "start"), length, -1, length - 1);
      hi = stop == null ? -1 : clamp(toInt(stop, "stop"), length, -1, length - 1);
    }
    int count =
        step > 0
            ? Math.max(0, (hi - lo + step - 1) / step)
            : Math.max(0, (lo - hi + (-step) - 1) / (-step));
    int[] out = new int[count];
    for (int k = 0, i = lo; k < count; k++, i += step) {
      out[k] = i;
    }
    return out;
  }

  private static int clamp(int index, int length, int min, int max) {
    int i = index < 0 ? index + length : index;
    return Math.max(min, Math.min(max, i));
  }

  private static int toInt(Object o, String what) {
    if (o instanceof Number num) {
      return num.intValue();
    }
    throw new IllegalArgumentException("slice " + what + " must be an integer, got " + o);
  }
}
