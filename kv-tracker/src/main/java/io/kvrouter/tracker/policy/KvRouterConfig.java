package io.kvrouter.tracker.policy;

/**
 * Parameters of kvrouter's policy ({@code kvrouter}, {@link TtftPolicy}).
 *
 * @param chunkTokens the engines' prefill chunk ({@code max_num_batched_tokens}, vLLM's default
 *     8,192 for online serving): tokens computed per pass
 * @param fitTiming fit the engines' timing online from observed first tokens; off keeps the prior
 *     ({@link EngineTiming#MOCKER})
 * @param fitForgetting forgetting factor of the fit (0.999: an observation's weight halves after
 *     about 700 newer ones)
 * @param concurrency how concurrent decisions on different routers are made to diverge: {@code off}
 *     (each router alone), {@code random} (near-ties drawn at random), {@code turns} (near-ties
 *     resolved by each router's turn; the default), {@code unseen} (turns, plus the load the peers
 *     deciding now are expected to place ahead of this router's turn). Measured in the lab
 *     (conversation trace, first 3,000 requests, 8 replicas × 65,536 blocks, 8 routers, 5 ms, as
 *     recorded): p90 TTFT off 1,475 ms, random 846, unseen 846, turns 780 (1 router: 554-562)
 * @param workWeight weight of the compute time the request's own uncached tokens take from the
 *     replica (and so from the requests after it) added to its predicted TTFT: 0 is purely myopic
 *     (recomputing a shared prefix elsewhere looks free when it is as fast as queueing behind it);
 *     1 (the default) led 0 and 2 in the lab: sglang-gsp p90 895 ms / hit 0.853 against 1,235 /
 *     0.800 at 0, conversation (3,000 requests) 557 / 0.260 against 561 / 0.241
 * @param tieMillis predicted TTFTs within this many milliseconds of the best are near-ties
 * @param tieRelative predicted TTFTs within this fraction of the best are near-ties
 * @param rotationMillis routers' turns rotate this often (their shared clock)
 * @param horizonMillis a peer not heard from for this long is no longer counted
 * @param maxDelayMillis the largest propagation delay believed (clock skew beyond is ignored)
 */
public record KvRouterConfig(
    int chunkTokens,
    boolean fitTiming,
    double fitForgetting,
    String concurrency,
    double workWeight,
    double tieMillis,
    double tieRelative,
    long rotationMillis,
    long horizonMillis,
    long maxDelayMillis) {

  /** The concurrency modes, see above. */
  public static final java.util.List<String> CONCURRENCY =
      java.util.List.of("off", "random", "turns", "unseen");

  public KvRouterConfig {
    if (chunkTokens < 1) {
      throw new IllegalArgumentException("chunkTokens must be >= 1");
    }
    if (!CONCURRENCY.contains(concurrency)) {
      throw new IllegalArgumentException(
          "concurrency must be one of " + CONCURRENCY + ", was " + concurrency);
    }
  }

  /** The defaults described above. */
  public static KvRouterConfig defaults() {
    return new KvRouterConfig(8192, true, 0.999, "turns", 1.0, 2.0, 0.02, 1000, 30_000, 1000);
  }

  public KvRouterConfig withConcurrency(String mode) {
    return new KvRouterConfig(
        chunkTokens,
        fitTiming,
        fitForgetting,
        mode,
        workWeight,
        tieMillis,
        tieRelative,
        rotationMillis,
        horizonMillis,
        maxDelayMillis);
  }

  public KvRouterConfig withFitTiming(boolean on) {
    return new KvRouterConfig(
        chunkTokens,
        on,
        fitForgetting,
        concurrency,
        workWeight,
        tieMillis,
        tieRelative,
        rotationMillis,
        horizonMillis,
        maxDelayMillis);
  }
}
