package io.kvrouter.ingress.tokenize;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * An EL resolver that answers Python {@code str} and {@code dict} method calls in template
 * expressions, so {@code message.content.startswith('<tool_response>')} or {@code
 * content.split('</think>')[-1].lstrip('\n')} behave as in Python instead of failing (no such Java
 * method) or silently differing (Java's {@code split} takes a regex and drops trailing empty
 * strings).
 *
 * <p>String methods: {@code startswith}, {@code endswith} (a string or a list of prefixes), {@code
 * strip}, {@code lstrip}, {@code rstrip} (optional character set), {@code split} (optional
 * separator and maxsplit), {@code upper}, {@code lower}, {@code replace} (optional count), {@code
 * join}. Dict methods: {@code get(key, default)}. Semantics follow the Python documentation of
 * {@code str} and {@code dict}; whitespace is Python's {@code str.isspace}. Any other call is left
 * to the next resolver (jinjava's own).
 *
 * <p>Stateless and thread-safe; each call costs O(length of the string).
 */
final class PythonMethodResolver extends ELResolver {

  @Override
  public Object invoke(
      ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
    if (base == null || method == null) {
      return null;
    }
    Object[] args = params == null ? new Object[0] : params;
    String name = method.toString();
    Object result;
    if (base instanceof CharSequence cs) {
      result = stringMethod(cs.toString(), name, args);
    } else if (base instanceof Map<?, ?> map && name.equals("get") && args.length == 2) {
      result = map.containsKey(args[0]) ? map.get(args[0]) : args[1];
    } else {
      return null;
    }
    if (result == NOT_HANDLED) {
      return null;
    }
    context.setPropertyResolved(true);
    return result;
  }

  private static final Object NOT_HANDLED = new Object();

  private static Object stringMethod(String s, String name, Object[] args) {
    switch (name) {
      case "startswith":
        return affix(s, args, true);
      case "endswith":
        return affix(s, args, false);
      case "strip":
        return strip(s, charsArg(args), true, true);
      case "lstrip":
        return strip(s, charsArg(args), true, false);
      case "rstrip":
        return strip(s, charsArg(args), false, true);
      case "split":
        return split(
            s,
            args.length > 0 ? args[0] : null,
            args.length > 1 ? ((Number) args[1]).intValue() : -1);
      case "upper":
        return args.length == 0 ? s.toUpperCase(java.util.Locale.ROOT) : NOT_HANDLED;
      case "lower":
        return args.length == 0 ? s.toLowerCase(java.util.Locale.ROOT) : NOT_HANDLED;
      case "replace":
        if (args.length < 2) {
          return NOT_HANDLED;
        }
        return replace(
            s,
            String.valueOf(args[0]),
            String.valueOf(args[1]),
            args.length > 2 ? ((Number) args[2]).intValue() : -1);
      case "join":
        return args.length == 1 ? join(s, args[0]) : NOT_HANDLED;
      default:
        return NOT_HANDLED;
    }
  }

  private static Object affix(String s, Object[] args, boolean prefix) {
    if (args.length != 1) {
      return NOT_HANDLED;
    }
    if (args[0] instanceof Collection<?> options) {
      for (Object o : options) {
        if (prefix ? s.startsWith(String.valueOf(o)) : s.endsWith(String.valueOf(o))) {
          return true;
        }
      }
      return false;
    }
    String a = String.valueOf(args[0]);
    return prefix ? s.startsWith(a) : s.endsWith(a);
  }

  private static String charsArg(Object[] args) {
    return args.length == 0 || args[0] == null ? null : String.valueOf(args[0]);
  }

  /** Python {@code str.strip}: {@code chars == null} strips whitespace. */
  static String strip(String s, String chars, boolean left, boolean right) {
    int start = 0;
    int end = s.length();
    if (left) {
      while (start < end && strippable(s.codePointAt(start), chars)) {
        start += Character.charCount(s.codePointAt(start));
      }
    }
    if (right) {
      while (end > start && strippable(s.codePointBefore(end), chars)) {
        end -= Character.charCount(s.codePointBefore(end));
      }
    }
    return s.substring(start, end);
  }

  private static boolean strippable(int cp, String chars) {
    return chars == null ? isPythonSpace(cp) : chars.indexOf(cp) >= 0;
  }

  /** Python's {@code str.isspace} for one code point. */
  static boolean isPythonSpace(int cp) {
    return Character.isWhitespace(cp) || Character.isSpaceChar(cp) || cp == 0x85;
  }

  /**
   * Python {@code str.split}: literal separator, keeps empty parts; no separator splits runs of
   * space.
   */
  static List<String> split(String s, Object sep, int maxSplit) {
    List<String> out = new ArrayList<>();
    if (sep == null) {
      int i = 0;
      int n = s.length();
      while (true) {
        while (i < n && isPythonSpace(s.codePointAt(i))) {
          i += Character.charCount(s.codePointAt(i));
        }
        if (i >= n) {
          return out;
        }
        if (maxSplit >= 0 && out.size() == maxSplit) {
          out.add(s.substring(i));
          return out;
        }
        int start = i;
        while (i < n && !isPythonSpace(s.codePointAt(i))) {
          i += Character.charCount(s.codePointAt(i));
        }
        out.add(s.substring(start, i));
      }
    }
    String separator = String.valueOf(sep);
    if (separator.isEmpty()) {
      throw new IllegalArgumentException("empty separator");
    }
    int from = 0;
    int at;
    while ((maxSplit < 0 || out.size() < maxSplit) && (at = s.indexOf(separator, from)) >= 0) {
      out.add(s.substring(from, at));
      from = at + separator.length();
    }
    out.add(s.substring(from));
    return out;
  }

  private static String replace(String s, String old, String with, int count) {
    if (count < 0) {
      return s.replace(old, with);
    }
    StringBuilder sb = new StringBuilder();
    int from = 0;
    int done = 0;
    int at;
    while (done < count && !old.isEmpty() && (at = s.indexOf(old, from)) >= 0) {
      sb.append(s, from, at).append(with);
      from = at + old.length();
      done++;
    }
    return sb.append(s.substring(from)).toString();
  }

  private static String join(String sep, Object items) {
    StringBuilder sb = new StringBuilder();
    Iterable<?> it = items instanceof Iterable<?> i ? i : List.of(items);
    boolean first = true;
    for (Object o : it) {
      if (!first) {
        sb.append(sep);
      }
      sb.append(o);
      first = false;
    }
    return sb.toString();
  }

  @Override
  public Object getValue(ELContext context, Object base, Object property) {
    return null;
  }

  @Override
  public Class<?> getType(ELContext context, Object base, Object property) {
    return null;
  }

  @Override
  public void setValue(ELContext context, Object base, Object property, Object value) {
    // Not a property resolver: leaves assignments to the next resolver.
  }

  @Override
  public boolean isReadOnly(ELContext context, Object base, Object property) {
    return true;
  }

  @Override
  public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
    return null;
  }

  @Override
  public Class<?> getCommonPropertyType(ELContext context, Object base) {
    return null;
  }
}
