package io.kvrouter.systemtest.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A class-data-sharing archive (JDK 13+ dynamic AppCDS, {@code -XX:ArchiveClassesAtExit}) of the
 * classes a node loads, made once per build beside the fat jar and handed to every node process the
 * tests start.
 *
 * <p>A node loads some 11,000 classes (Pekko Cluster, Pekko HTTP, Jackson, Scala) before it answers
 * {@code /health}: 5.8-6.7 s for an ingress on the idle 2-core machine, 3.4-3.6 s with the archive.
 * The suite starts dozens of node processes, many one after the other. The archive is made by
 * running {@code demo} (engine, agent and ingress in one JVM, so every role's classes) until it is
 * ready, then SIGTERM: the JVM writes the archive as it exits, 17-22 s once. If that fails, nodes
 * start without it, as before.
 *
 * <p>The archive is tied to the fat jar it was made from (the JVM checks the class path and refuses
 * a stale one); it is made again when the jar is newer.
 */
final class NodeClassArchive {

  /** The JVM options every node process gets, the archive's maker included. */
  static final List<String> NODE_JVM_OPTIONS =
      List.of(
          "-Xmx256m",
          // Test nodes live for seconds to minutes, several at once on a 2-core machine: the C1
          // compiler alone, and a single-threaded collector, keep their start-up from starving
          // each other.
          "-XX:TieredStopAtLevel=1",
          "-XX:+UseSerialGC",
          "-Dai.djl.offline=true");

  /** The {@code demo} command with every port left to the system. */
  static final List<String> DEMO_ON_FREE_PORTS =
      List.of("demo", "--ingress-port", "0", "--engine-port", "0", "--kv-events-port", "0");

  private static Optional<Path> archive;

  private NodeClassArchive() {}

  /** The {@code java} command with the node options and, once it exists, the archive. */
  static List<String> javaCommand(Path fatJar) {
    List<String> command = javaCommand();
    of(fatJar).ifPresent(a -> command.add("-XX:SharedArchiveFile=" + a));
    return command;
  }

  /** The {@code java} command with the node options, no archive (for a jar it was not made of). */
  static List<String> javaCommand() {
    List<String> command = new ArrayList<>();
    command.add(java());
    command.addAll(NODE_JVM_OPTIONS);
    return command;
  }

  /** The archive for this fat jar, made on first use; empty when it could not be made. */
  static synchronized Optional<Path> of(Path fatJar) {
    if (archive == null) {
      archive = make(fatJar);
    }
    return archive;
  }

  private static Optional<Path> make(Path fatJar) {
    Path target = fatJar.resolveSibling(fatJar.getFileName() + ".jsa");
    try {
      if (Files.exists(target)
          && Files.getLastModifiedTime(target).compareTo(Files.getLastModifiedTime(fatJar)) > 0) {
        return Optional.of(target);
      }
      long start = System.nanoTime();
      Path partial = fatJar.resolveSibling(fatJar.getFileName() + ".jsa.partial");
      Files.deleteIfExists(partial);
      Path log = Files.createTempFile("kvrouter-class-archive", ".log");
      List<String> command = new ArrayList<>();
      command.add(java());
      command.addAll(NODE_JVM_OPTIONS);
      command.add("-XX:ArchiveClassesAtExit=" + partial);
      command.addAll(List.of("-jar", fatJar.toString()));
      command.addAll(DEMO_ON_FREE_PORTS);
      Process demo =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (demo.isAlive()
          && System.nanoTime() < deadline
          && !Files.readString(log).contains("kvrouter demo ready")) {
        Thread.sleep(100); // polls the demo's log for its ready line
      }
      demo.destroy(); // SIGTERM: the JVM writes the archive as it exits
      boolean exited = demo.waitFor(60, TimeUnit.SECONDS);
      if (!exited) {
        demo.destroyForcibly();
      }
      if (exited && Files.exists(partial) && Files.size(partial) > 0) {
        Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
        System.out.printf(
            "node class archive: %s made in %.1f s%n", target, (System.nanoTime() - start) / 1e9);
        return Optional.of(target);
      }
      System.out.printf("node class archive not made; nodes start without it (log %s)%n", log);
    } catch (Exception e) {
      System.out.printf("node class archive not made (%s); nodes start without it%n", e);
    }
    return Optional.empty();
  }

  /** The {@code java} executable of the JVM running the tests. */
  static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
