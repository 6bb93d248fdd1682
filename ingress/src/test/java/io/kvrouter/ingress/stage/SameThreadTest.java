package io.kvrouter.ingress.stage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import scala.concurrent.Promise;
import scala.jdk.javaapi.FutureConverters;

class SameThreadTest {

  /** A stage as Pekko's Java APIs return one, and the thread a callback on it ran on. */
  private static String callbackThread(boolean sameThread) throws Exception {
    Promise<String> promise = scala.concurrent.Promise$.MODULE$.apply();
    CompletionStage<String> pekko = FutureConverters.asJava(promise.future());
    CompletionStage<String> stage = sameThread ? SameThread.of(pekko) : pekko;
    AtomicReference<String> ranOn = new AtomicReference<>();
    CompletionStage<String> after =
        stage.thenApply(
            v -> {
              ranOn.set(Thread.currentThread().getName());
              return v;
            });
    Thread completer = new Thread(() -> promise.success("done"), "the-completing-thread");
    completer.start();
    completer.join();
    assertThat(after.toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("done");
    return ranOn.get();
  }

  @Test
  void aPekkoStage_handsItsCallbacksToAnotherThread() throws Exception {
    // the premise: Scala's CompletionStage turns thenApply into thenApplyAsync (the common pool,
    // or a thread per task where the common pool has fewer than two threads)
    assertThat(callbackThread(false)).isNotEqualTo("the-completing-thread");
  }

  @Test
  void sameThread_runsCallbacksOnTheCompletingThread() throws Exception {
    assertThat(callbackThread(true)).isEqualTo("the-completing-thread");
  }

  @Test
  void sameThread_passesFailuresOn() {
    Promise<String> promise = scala.concurrent.Promise$.MODULE$.apply();
    var stage = SameThread.of(FutureConverters.asJava(promise.future()));
    promise.failure(new IllegalStateException("boom"));
    assertThat(stage).isCompletedExceptionally();
    assertThat(stage.handle((v, e) -> e.getMessage()).join()).contains("boom");
  }
}
