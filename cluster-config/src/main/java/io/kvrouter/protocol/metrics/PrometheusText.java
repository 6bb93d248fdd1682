package io.kvrouter.protocol.metrics;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The one parser of engines' {@code /metrics} (the agent's load heartbeat, the bench's scrapes, the
 * tests): a tolerant parser for the Prometheus text exposition format (version 0.0.4) and the parts
 * of OpenMetrics text a scraper meets in practice: {@code # HELP}/{@code # TYPE}/{@code # EOF}
 * lines, samples {@code name{label="value",...} value [timestamp]}, label values with escapes
 * ({@code \\}, {@code \"}, {@code \n}), values such as {@code +Inf}, {@code -Inf}, {@code NaN},
 * {@code 1.5e+06}, and OpenMetrics exemplars after {@code " # "}. The format is described in
 * prometheus/docs {@code content/docs/instrumenting/exposition_formats.md}.
 *
 * <p>Contract: never throws on bad input; a line it cannot read is skipped and counted ({@link
 * Parsed#skippedLines()}). Metric names may contain colons ({@code vllm:...}). Cost: O(text
 * length), one {@link Sample} per sample line.
 */
public final class PrometheusText {

  private PrometheusText() {}

  /** One sample line. {@code labels} is unmodifiable, in the order written. */
  public record Sample(String name, Map<String, String> labels, double value) {}

  /** The samples of one scrape and the number of lines that could not be read. */
  public record Parsed(List<Sample> samples, int skippedLines) {

    /**
     * Sum of {@code name} over all its label sets; empty if no such sample exists. NaNs are
     * skipped.
     */
    public OptionalDouble sum(String name) {
      boolean found = false;
      double total = 0;
      for (Sample s : samples) {
        if (s.name().equals(name)) {
          found = true;
          if (!Double.isNaN(s.value())) {
            total += s.value();
          }
        }
      }
      return found ? OptionalDouble.of(total) : OptionalDouble.empty();
    }

    /**
     * Every metric's sum over its label sets, by name (NaNs skipped): what a caller that only needs
     * totals reads.
     */
    public Map<String, Double> sums() {
      Map<String, Double> out = new LinkedHashMap<>();
      for (Sample s : samples) {
        out.merge(s.name(), Double.isNaN(s.value()) ? 0.0 : s.value(), Double::sum);
      }
      return out;
    }

    /** {@link #sum} of the first name that has samples. */
    public OptionalDouble sumFirst(String... names) {
      for (String n : names) {
        OptionalDouble v = sum(n);
        if (v.isPresent()) {
          return v;
        }
      }
      return OptionalDouble.empty();
    }
  }

  /** Parses a whole scrape. */
  public static Parsed parse(String text) {
    List<Sample> samples = new ArrayList<>();
    int skipped = 0;
    for (String raw : text.split("\r?\n|\r")) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Sample s = parseLine(line);
      if (s == null) {
        skipped++;
      } else {
        samples.add(s);
      }
    }
    return new Parsed(List.copyOf(samples), skipped);
  }

  /** Parses one sample line, or returns {@code null} if it is not one. */
  static Sample parseLine(String line) {
    int i = 0;
    int n = line.length();
    while (i < n && isNameChar(line.charAt(i), i == 0)) {
      i++;
    }
    if (i == 0) {
      return null;
    }
    String name = line.substring(0, i);
    Map<String, String> labels = new LinkedHashMap<>();
    i = skipBlanks(line, i);
    if (i < n && line.charAt(i) == '{') {
      i = parseLabels(line, i + 1, labels);
      if (i < 0) {
        return null;
      }
    }
    i = skipBlanks(line, i);
    int end = i;
    while (end < n && !Character.isWhitespace(line.charAt(end))) {
      end++;
    }
    if (end == i) {
      return null;
    }
    Double value = parseValue(line.substring(i, end));
    if (value == null) {
      return null;
    }
    // Anything after the value is a timestamp or an exemplar: not needed here.
    return new Sample(name, Collections.unmodifiableMap(labels), value);
  }

  /** Parses labels after '{'; returns the index after '}', or -1 if malformed. */
  private static int parseLabels(String line, int i, Map<String, String> labels) {
    int n = line.length();
    while (true) {
      i = skipBlanks(line, i);
      if (i < n && line.charAt(i) == '}') {
        return i + 1;
      }
      int start = i;
      while (i < n && isNameChar(line.charAt(i), i == start) && line.charAt(i) != ':') {
        i++;
      }
      if (i == start) {
        return -1;
      }
      String key = line.substring(start, i);
      i = skipBlanks(line, i);
      if (i >= n || line.charAt(i) != '=') {
        return -1;
      }
      i = skipBlanks(line, i + 1);
      if (i >= n || line.charAt(i) != '"') {
        return -1;
      }
      StringBuilder value = new StringBuilder();
      i++;
      while (true) {
        if (i >= n) {
          return -1;
        }
        char c = line.charAt(i);
        if (c == '"') {
          i++;
          break;
        }
        if (c == '\\' && i + 1 < n) {
          char e = line.charAt(i + 1);
          value.append(e == 'n' ? '\n' : e);
          i += 2;
        } else {
          value.append(c);
          i++;
        }
      }
      labels.put(key, value.toString());
      i = skipBlanks(line, i);
      if (i < n && line.charAt(i) == ',') {
        i++;
      } else if (i < n && line.charAt(i) == '}') {
        return i + 1;
      } else {
        return -1;
      }
    }
  }

  /** Go's ParseFloat spellings as Prometheus writes them; {@code null} if not a number. */
  static Double parseValue(String s) {
    switch (s.toLowerCase(java.util.Locale.ROOT)) {
      case "+inf", "inf", "+infinity", "infinity":
        return Double.POSITIVE_INFINITY;
      case "-inf", "-infinity":
        return Double.NEGATIVE_INFINITY;
      case "nan", "+nan", "-nan":
        return Double.NaN;
      default:
        break;
    }
    for (int k = 0; k < s.length(); k++) {
      char c = s.charAt(k);
      if (!(Character.isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
        return null; // Double.parseDouble would accept "1d" or "0x1p3": Prometheus does not
      }
    }
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static boolean isNameChar(char c, boolean first) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || c == '_'
        || c == ':'
        || (!first && c >= '0' && c <= '9');
  }

  private static int skipBlanks(String line, int i) {
    while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
      i++;
    }
    return i;
  }
}
