package io.kvrouter.loadtest.workload;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Locates the project's {@code shared/} folder (traces, specs), which sits beside the repository
 * clone rather than inside it. Order: the system property {@value #PROPERTY} (the load-tests pom
 * sets it to {@code ${maven.multiModuleProjectDirectory}/../shared} for tests), the environment
 * variable {@value #ENV}, then walking up from the working directory looking for {@code
 * shared/traces}. Stateless; O(depth of the working directory) file checks.
 */
public final class SharedDir {

  /** System property naming the shared folder. */
  public static final String PROPERTY = "kvrouter.shared.dir";

  /** Environment variable naming the shared folder. */
  public static final String ENV = "KVROUTER_SHARED_DIR";

  private SharedDir() {}

  /**
   * The shared folder.
   *
   * @throws IllegalStateException if none is configured or found
   */
  public static Path locate() {
    String configured = System.getProperty(PROPERTY);
    if (configured == null || configured.isBlank()) {
      configured = System.getenv(ENV);
    }
    if (configured != null && !configured.isBlank()) {
      Path p = Paths.get(configured).toAbsolutePath().normalize();
      if (Files.isDirectory(p.resolve("traces"))) {
        return p;
      }
    }
    Path start = Paths.get("").toAbsolutePath();
    for (Path dir = start; dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve("shared");
      if (Files.isDirectory(candidate.resolve("traces"))) {
        return candidate;
      }
    }
    throw new IllegalStateException(
        "cannot find the shared/ folder: set -D"
            + PROPERTY
            + " or "
            + ENV
            + " (configured: "
            + configured
            + "), or run below a folder that holds shared/traces (from "
            + start
            + ")");
  }

  /** {@code shared/traces/<fileName>}. */
  public static Path trace(String fileName) {
    return locate().resolve("traces").resolve(fileName);
  }
}
