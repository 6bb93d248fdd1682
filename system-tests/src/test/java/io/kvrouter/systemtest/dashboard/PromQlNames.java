package io.kvrouter.systemtest.dashboard;

import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression reads. Enough of PromQL for dashboard queries: strings,
 * label matchers, range and subquery brackets and {@code by/without/on/ignoring/group_*} label
 * lists are removed; what remains that looks like a name, is not followed by {@code (} (a function
 * or aggregation) and is not a keyword, is a metric name. Names may hold colons ({@code
 * vllm:kv_cache_usage_perc}).
 */
final class PromQlNames {

  private static final Set<String> KEYWORDS =
      Set.of(
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "bool",
          "offset",
          "and",
          "or",
          "unless",
          "inf",
          "nan");
  private static final Pattern NAME =
      Pattern.compile("(?<![\\w:.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\\w:])(\\s*\\()?");

  private PromQlNames() {}

  static Set<String> of(String expr) {
    String s = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"");
    s = s.replaceAll("\\{[^}]*\\}", " ");
    s = s.replaceAll("\\[[^\\]]*\\]", " ");
    s = s.replaceAll("(?i)\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ");
    Set<String> names = new TreeSet<>();
    Matcher m = NAME.matcher(s);
    while (m.find()) {
      String name = m.group(1);
      if (m.group(2) == null && !KEYWORDS.contains(name.toLowerCase())) {
        names.add(name);
      }
    }
    return names;
  }
}
