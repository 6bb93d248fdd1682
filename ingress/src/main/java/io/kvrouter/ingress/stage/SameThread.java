package io.kvrouter.ingress.stage;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A Pekko future as a stage whose callbacks run on the thread that completes it, as a plain {@link
 * CompletableFuture}'s do.
 *
 * <p>Every {@link CompletionStage} a Pekko Java API returns ({@code toStrict}, {@code
 * Http.singleRequest}, {@code AskPattern.ask}, {@code watchTermination}) is Scala's {@code
 * FutureConvertersImpl.CF}, which turns {@code thenApply}, {@code thenCompose}, {@code handle},
 * {@code whenComplete} and {@code exceptionally} into their {@code *Async} forms (scala-library
 * 2.13.18, {@code scala/concurrent/impl/FutureConvertersImpl.scala}): each callback is a hand-off
 * to {@link java.util.concurrent.ForkJoinPool#commonPool()}, a thread wake-up and a context switch
 * per request on the ingress's path. {@link CompletableFuture#copy()} of it is a plain future (the
 * CF does not override {@code newIncompleteFuture}) that the CF completes on its completing thread
 * (it listens with Scala's parasitic executor): a Pekko dispatcher thread, or the one that replied
 * to an ask. Only for callbacks that are short and never block.
 */
public final class SameThread {

  private SameThread() {}

  /** {@code stage} with callbacks on its completing thread. */
  public static <T> CompletableFuture<T> of(CompletionStage<T> stage) {
    return stage.toCompletableFuture().copy();
  }
}
