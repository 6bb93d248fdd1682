package io.kvrouter.cli;

import java.util.concurrent.ForkJoinPool;

/**
 * Gives {@code CompletableFuture}'s default executor a thread pool on small machines, before
 * anything loads {@link ForkJoinPool}.
 *
 * <p>Why: Pekko's Java API hands out its futures as Scala's {@code FutureConverters} wrapper, whose
 * plain callbacks ({@code thenApply}, {@code thenCompose}, {@code whenComplete}, {@code handle})
 * run as their {@code ...Async} forms on the default executor, the common pool. The JDK sizes that
 * pool at one thread fewer than the cores, and below two threads {@code CompletableFuture} does not
 * use it: it starts a new thread for every task ({@code CompletableFuture.ThreadPerTaskExecutor},
 * JDK 17 {@code java.util.concurrent.CompletableFuture#USE_COMMON_POOL}). On a 2-core machine, or a
 * container limited to 2 CPUs, the ingress would thus start several threads per proxied request.
 *
 * <p>This sets {@code java.util.concurrent.ForkJoinPool.common.parallelism} to 2 when the machine
 * would get fewer and the user set nothing; it must run before the first use of {@link
 * ForkJoinPool} (first thing in {@code main}).
 */
final class CommonPool {

  static final String PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  /** The fewest common-pool threads with which {@code CompletableFuture} uses the pool. */
  static final int MIN_PARALLELISM = 2;

  private CommonPool() {}

  /** Sets the common pool's parallelism when needed (see the class comment). */
  static void ensureThreads() {
    String chosen =
        parallelism(System.getProperty(PARALLELISM), Runtime.getRuntime().availableProcessors());
    if (chosen != null) {
      System.setProperty(PARALLELISM, chosen);
    }
  }

  /**
   * The parallelism to set, or null to leave the JDK's choice: a user's setting always stands;
   * otherwise the JDK gives {@code cores - 1}, and below {@link #MIN_PARALLELISM} this raises it.
   */
  static String parallelism(String configured, int cores) {
    if (configured != null || cores - 1 >= MIN_PARALLELISM) {
      return null;
    }
    return Integer.toString(MIN_PARALLELISM);
  }
}
