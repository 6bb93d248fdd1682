package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PromptEncoderTest {

  /** A pool that counts what it was handed and runs it on a thread of its own. */
  private static final class CountingPool implements Executor {
    final AtomicInteger handed = new AtomicInteger();

    @Override
    public void execute(Runnable task) {
      handed.incrementAndGet();
      new Thread(task, "tokenize-pool").start();
    }
  }

  private static PromptEncoder encoder(CountingPool pool, long inlineMaxBytes) {
    return new PromptEncoder(pool, null, inlineMaxBytes);
  }

  @Test
  void aShortBody_tokenizesOnTheCallersThread_withoutTheHandOff() {
    CountingPool pool = new CountingPool();
    String caller = Thread.currentThread().getName();
    String ranOn =
        encoder(pool, 8192)
            .forBody(8192, () -> Thread.currentThread().getName())
            .toCompletableFuture()
            .join();
    assertThat(ranOn).isEqualTo(caller);
    assertThat(pool.handed).hasValue(0);
  }

  @Test
  void aLongBody_goesToThePool() {
    CountingPool pool = new CountingPool();
    String ranOn =
        encoder(pool, 8192)
            .forBody(8193, () -> Thread.currentThread().getName())
            .toCompletableFuture()
            .join();
    assertThat(ranOn).isEqualTo("tokenize-pool");
    assertThat(pool.handed).hasValue(1);
  }

  @Test
  void withoutAnInlineSize_everyBodyGoesToThePool() {
    CountingPool pool = new CountingPool();
    new PromptEncoder(pool, null).forBody(1, () -> 1).toCompletableFuture().join();
    assertThat(pool.handed).hasValue(1);
  }

  @Test
  void aFailureOnTheCallersThread_failsTheStageAsOnThePool() {
    var stage =
        encoder(new CountingPool(), 8192)
            .forBody(
                10,
                () -> {
                  throw new ChatTemplateException("bad turn");
                });
    assertThat(stage.toCompletableFuture()).isCompletedExceptionally();
    assertThat(stage.handle((v, e) -> e.getCause().getMessage()).toCompletableFuture().join())
        .isEqualTo("bad turn");
  }
}
