package io.kvrouter.loadtest.workload;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The request traces that ship inside the jar (see {@code io/kvrouter/loadtest/traces/README.md}
 * for their source and licence), opened by workload name. Nothing outside the classpath is read.
 * Stateless.
 */
public final class BundledTraces {

  /** The names of the bundled traces, each stored as {@code <name>.jsonl}. */
  public static final List<String> NAMES =
      List.of(Workloads.MOONCAKE_CONVERSATION, Workloads.MOONCAKE_SYNTHETIC);

  private static final String FOLDER = "/io/kvrouter/loadtest/traces/";

  private BundledTraces() {}

  /**
   * Opens the bundled trace of that name; the caller closes the reader.
   *
   * @throws IllegalArgumentException if no trace of that name is bundled
   */
  public static BufferedReader open(String name) {
    InputStream in =
        NAMES.contains(name) ? BundledTraces.class.getResourceAsStream(resource(name)) : null;
    if (in == null) {
      throw new IllegalArgumentException(
          "no bundled trace named '" + name + "' (bundled: " + String.join(", ", NAMES) + ")");
    }
    return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
  }

  /** The classpath resource of a bundled trace, for error messages and reports. */
  public static String resource(String name) {
    return FOLDER + name + ".jsonl";
  }
}
