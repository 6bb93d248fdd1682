package io.kvrouter.loadtest.bench;

import java.util.HashMap;
import java.util.Map;

/**
 * The {@code --name value} options of the small bench programs that {@code load-tests/bench/*.sh}
 * start with {@code java -cp} (they have no CLI framework of their own), or their usage line on
 * standard error and exit status 2 when a required option is missing.
 */
final class OptionPairs {

  private OptionPairs() {}

  /** Options as pairs, in order; a value for every name in {@code required}, or usage and exit. */
  static Map<String, String> parse(String[] args, String usage, String... required) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i], args[i + 1]);
    }
    for (String name : required) {
      if (!options.containsKey(name)) {
        System.err.println("usage: " + usage);
        System.exit(2);
      }
    }
    return options;
  }
}
