package io.kvrouter.tracker.bench;

import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** Block-key cost at the ingress: keys of a whole prompt into a reused array. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class BlockKeysBenchmark {

  @Param({"2048", "131072"})
  public int promptTokens;

  private final BlockKeys keys = BlockKeys.of("bench-model", 16);
  private int[] tokens;
  private long[] out;

  @Setup
  public void build() {
    tokens = new int[promptTokens];
    for (int i = 0; i < promptTokens; i++) {
      tokens[i] = (i * 7919) % 151_000;
    }
    out = new long[promptTokens / 16];
  }

  @Benchmark
  public long[] keysInto() {
    keys.keysInto(tokens, tokens.length, ExtraKeys.NONE, out);
    return out;
  }
}
