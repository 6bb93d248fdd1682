package io.kvrouter.ingress.tokenize;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Rewrites the expressions of a Jinja template so that jinjava parses two Python idioms the way
 * Python's jinja2 does. Text outside tags, comments and {@code raw} blocks is copied unchanged.
 *
 * <ul>
 *   <li><b>Slices</b>: a subscript whose brackets hold a top-level colon, {@code x[a:b:c]} (any
 *       part may be empty), becomes {@code py_slice(x, a, b, c)} with empty parts as {@code null}.
 *       jinjava's own range bracket knows no step, so {@code messages[::-1]} (Qwen3, DeepSeek, ...)
 *       fails to parse otherwise. {@link TemplateFunctions#pySlice} implements the Python semantics
 *       (negative indices, negative steps, clamping).
 *   <li><b>Keyword arguments</b>: in a call, {@code name=expr} becomes {@code name=(expr)}. jinjava
 *       binds {@code =} tighter than arithmetic, so {@code namespace(n=messages|length - 1)} would
 *       otherwise subtract 1 from the named parameter object, whereas jinja2 parses the whole
 *       {@code expr} as the value (jinja2 {@code Parser.parse_call_args}).
 * </ul>
 *
 * <p>Macro and call-block signatures ({@code {% macro f(a=1) %}}) are left alone: jinjava parses
 * them itself.
 *
 * <p>Cost: one linear pass over the template plus, per slice, a backward scan over the operand
 * already written; done once per template, not per render. Stateless and thread-safe.
 */
final class JinjaSourceRewriter {

  private JinjaSourceRewriter() {}

  /**
   * Returns the template with its expressions rewritten.
   *
   * @param template Jinja source as found in {@code tokenizer_config.json}
   * @throws IllegalArgumentException if a tag, string or bracket is not closed
   */
  static String rewrite(String template) {
    StringBuilder out = new StringBuilder(template.length() + 64);
    int i = 0;
    int n = template.length();
    while (i < n) {
      int open = template.indexOf('{', i);
      if (open < 0 || open + 1 >= n) {
        out.append(template, i, n);
        break;
      }
      char kind = template.charAt(open + 1);
      if (kind != '{' && kind != '%' && kind != '#') {
        out.append(template, i, open + 1);
        i = open + 1;
        continue;
      }
      out.append(template, i, open);
      if (kind == '#') {
        int close = template.indexOf("#}", open + 2);
        if (close < 0) {
          throw new IllegalArgumentException("unclosed comment at offset " + open);
        }
        out.append(template, open, close + 2);
        i = close + 2;
        continue;
      }
      String closer = kind == '{' ? "}}" : "%}";
      int close = findTagEnd(template, open + 2, closer);
      String body = template.substring(open + 2, close);
      String keyword = firstWord(body);
      out.append(template, open, open + 2);
      if (kind == '%' && keyword.equals("raw")) {
        int end = template.indexOf("endraw", close);
        if (end < 0) {
          throw new IllegalArgumentException("unclosed raw block at offset " + open);
        }
        int endTag = template.indexOf("%}", end);
        out.append(template, open + 2, endTag + 2);
        i = endTag + 2;
        continue;
      }
      if (kind == '%' && (keyword.equals("macro") || keyword.equals("call"))) {
        out.append(body);
      } else {
        out.append(rewriteExpression(body));
      }
      out.append(closer);
      i = close + 2;
    }
    return out.toString();
  }

  /** Index of the closer that ends a tag starting at {@code from}, skipping string literals. */
  private static int findTagEnd(String s, int from, String closer) {
    int i = from;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == '\'' || c == '"') {
        i = skipString(s, i);
        continue;
      }
      if (s.startsWith(closer, i)) {
        return i;
      }
      i++;
    }
    throw new IllegalArgumentException("unclosed tag at offset " + (from - 2));
  }

  /** Returns the index just after the string literal that starts at {@code start}. */
  private static int skipString(String s, int start) {
    char quote = s.charAt(start);
    int i = start + 1;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == quote) {
        return i + 1;
      }
      i++;
    }
    throw new IllegalArgumentException("unclosed string literal at offset " + start);
  }

  private static String firstWord(String body) {
    int i = 0;
    while (i < body.length()
        && (body.charAt(i) == '-'
            || body.charAt(i) == '+'
            || Character.isWhitespace(body.charAt(i)))) {
      i++;
    }
    int start = i;
    while (i < body.length() && Character.isLetter(body.charAt(i))) {
      i++;
    }
    return body.substring(start, i);
  }

  /** One open bracket while rewriting: its kind and whether a keyword value is being wrapped. */
  private static final class Frame {
    final char open;
    final boolean call;
    final boolean slice;
    final int outStart;
    boolean inKeywordValue;

    Frame(char open, boolean call, boolean slice, int outStart) {
      this.open = open;
      this.call = call;
      this.slice = slice;
      this.outStart = outStart;
    }
  }

  /** Rewrites one tag body (the text between the delimiters). */
  static String rewriteExpression(String expr) {
    StringBuilder out = new StringBuilder(expr.length() + 16);
    Deque<Frame> frames = new ArrayDeque<>();
    int i = 0;
    int n = expr.length();
    while (i < n) {
      char c = expr.charAt(i);
      if (c == '\'' || c == '"') {
        int end = skipString(expr, i);
        out.append(expr, i, end);
        i = end;
        continue;
      }
      switch (c) {
        case '(' -> {
          frames.push(new Frame('(', endsWithOperand(out), false, out.length()));
          out.append(c);
        }
        case '[' -> {
          boolean subscript = endsWithOperand(out) && isSlice(expr, i);
          frames.push(new Frame('[', false, subscript, out.length()));
          out.append(subscript ? "\u0000" : "[");
        }
        case '{' -> {
          frames.push(new Frame('{', false, false, out.length()));
          out.append(c);
        }
        case ')', ']', '}' -> {
          Frame f = frames.poll();
          if (f == null) {
            throw new IllegalArgumentException("unbalanced '" + c + "' in: " + expr);
          }
          if (f.inKeywordValue) {
            out.append(')');
          }
          if (f.slice) {
            closeSlice(out, f);
          } else {
            out.append(c);
          }
        }
        case ',' -> {
          Frame f = frames.peek();
          if (f != null && f.inKeywordValue) {
            out.append(')');
            f.inKeywordValue = false;
          }
          out.append(c);
        }
        case ':' -> {
          Frame f = frames.peek();
          out.append(f != null && f.slice ? '\u0001' : ':');
        }
        case '=' -> {
          Frame f = frames.peek();
          boolean comparison =
              (i + 1 < n && expr.charAt(i + 1) == '=')
                  || (i > 0 && "=!<>".indexOf(expr.charAt(i - 1)) >= 0);
          if (comparison) {
            out.append(c);
            if (i + 1 < n && expr.charAt(i + 1) == '=') {
              out.append('=');
              i++;
            }
          } else if (f != null && f.call && !f.inKeywordValue && endsWithIdentifier(out)) {
            out.append("=(");
            f.inKeywordValue = true;
          } else {
            out.append(c);
          }
        }
        default -> out.append(c);
      }
      i++;
    }
    if (!frames.isEmpty()) {
      throw new IllegalArgumentException("unclosed '" + frames.peek().open + "' in: " + expr);
    }
    return out.toString();
  }

  /** True if the bracket at {@code open} holds a colon at its own nesting level. */
  private static boolean isSlice(String expr, int open) {
    int depth = 0;
    int i = open;
    while (i < expr.length()) {
      char c = expr.charAt(i);
      if (c == '\'' || c == '"') {
        i = skipString(expr, i);
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        depth++;
      } else if (c == ')' || c == ']' || c == '}') {
        depth--;
        if (depth == 0) {
          return false;
        }
      } else if (c == ':' && depth == 1) {
        return true;
      }
      i++;
    }
    return false;
  }

  /**
   * Replaces {@code operand \0 a \1 b \1 c} at the end of {@code out} with {@code py_slice(operand,
   * a, b, c)}.
   */
  private static void closeSlice(StringBuilder out, Frame f) {
    String inner = out.substring(f.outStart + 1);
    out.setLength(f.outStart);
    int operandStart = operandStart(out);
    String operand = out.substring(operandStart);
    out.setLength(operandStart);
    String[] parts = inner.split("\u0001", -1);
    if (parts.length > 3) {
      throw new IllegalArgumentException("slice with more than three parts: " + operand);
    }
    out.append("py_slice(").append(operand);
    for (int k = 0; k < 3; k++) {
      String part = k < parts.length ? parts[k].strip() : "";
      out.append(", ").append(part.isEmpty() ? "null" : part);
    }
    out.append(')');
  }

  /**
   * Start of the primary expression (name, attribute chain, call, subscript) ending {@code out}.
   */
  private static int operandStart(StringBuilder out) {
    int i = out.length() - 1;
    while (i >= 0) {
      char c = out.charAt(i);
      if (c == ')' || c == ']') {
        i = matchingOpen(out, i) - 1;
      } else if (c == '\'' || c == '"') {
        int j = i - 1;
        while (j >= 0 && !(out.charAt(j) == c && (j == 0 || out.charAt(j - 1) != '\\'))) {
          j--;
        }
        i = j - 1;
      } else if (Character.isLetterOrDigit(c) || c == '_' || c == '.') {
        i--;
      } else {
        break;
      }
    }
    return i + 1;
  }

  private static int matchingOpen(StringBuilder out, int close) {
    int depth = 0;
    for (int i = close; i >= 0; i--) {
      char c = out.charAt(i);
      if (c == ')' || c == ']') {
        depth++;
      } else if (c == '(' || c == '[') {
        depth--;
        if (depth == 0) {
          return i;
        }
      }
    }
    throw new IllegalArgumentException("unbalanced brackets before: " + out);
  }

  /** True if the text written so far ends with something a subscript or call can follow. */
  private static boolean endsWithOperand(StringBuilder out) {
    if (out.length() == 0) {
      return false;
    }
    char c = out.charAt(out.length() - 1);
    if (c == ')' || c == ']' || c == '\'' || c == '"') {
      return true;
    }
    if (!(Character.isLetterOrDigit(c) || c == '_')) {
      return false;
    }
    int start = out.length();
    while (start > 0
        && (Character.isLetterOrDigit(out.charAt(start - 1)) || out.charAt(start - 1) == '_')) {
      start--;
    }
    String word = out.substring(start);
    return !switch (word) {
      case "in", "and", "or", "not", "if", "else", "is", "for", "set" -> true;
      default -> false;
    };
  }

  private static boolean endsWithIdentifier(StringBuilder out) {
    int i = out.length() - 1;
    while (i >= 0 && out.charAt(i) == ' ') {
      i--;
    }
    return i >= 0 && (Character.isLetterOrDigit(out.charAt(i)) || out.charAt(i) == '_');
  }
}
