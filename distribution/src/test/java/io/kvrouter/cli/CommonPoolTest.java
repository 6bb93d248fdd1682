package io.kvrouter.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CommonPoolTest {

  @Test
  void raisesOnlyWhatTheJdkWouldLeaveBelowTwo_andNeverOverridesTheUser() {
    assertThat(CommonPool.parallelism(null, 1)).isEqualTo("2");
    assertThat(CommonPool.parallelism(null, 2)).isEqualTo("2");
    assertThat(CommonPool.parallelism(null, 3)).isNull();
    assertThat(CommonPool.parallelism(null, 16)).isNull();
    assertThat(CommonPool.parallelism("1", 2)).isNull();
  }

  /**
   * In a fresh JVM told it has 2 processors, an async callback without an executor runs on a
   * common-pool thread once {@link CommonPool#ensureThreads} ran, and on a fresh thread per task
   * without it (the JDK's fallback this class exists to avoid).
   */
  @Test
  void onTwoProcessors_asyncCallbacksRunInThePool_notOnAThreadEach() throws Exception {
    assertThat(threadOfAnAsyncCallback(true)).startsWith("ForkJoinPool.commonPool-worker");
    assertThat(threadOfAnAsyncCallback(false)).startsWith("Thread-");
  }

  private static String threadOfAnAsyncCallback(boolean ensure) throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(
                List.of(
                    java.toString(),
                    "-XX:ActiveProcessorCount=2",
                    "-cp",
                    System.getProperty("java.class.path"),
                    Probe.class.getName(),
                    Boolean.toString(ensure)))
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  /** Prints the name of the thread an executor-less async callback ran on. */
  public static final class Probe {
    public static void main(String[] args) throws Exception {
      if (Boolean.parseBoolean(args[0])) {
        CommonPool.ensureThreads();
      }
      if (ForkJoinPool.getCommonPoolParallelism() < 1) {
        throw new AssertionError("no common pool");
      }
      System.out.println(
          CompletableFuture.supplyAsync(() -> Thread.currentThread().getName())
              .get(30, TimeUnit.SECONDS));
    }
  }
}
