package io.kvrouter.loadtest.bench;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * How a run is driven. Requests are spread over {@code targets} (several ingresses, or several
 * plain engines) by the {@link TargetPolicy}; the run stops issuing at the first of {@code
 * maxRequests} sent (or dropped), {@code maxDuration} elapsed, the source exhausted, and then waits
 * at most {@code requestTimeout} for requests in flight.
 *
 * @param targets base URLs ({@code http://host:port} or {@code .../v1}), at least one
 * @param model model name sent when a request names none; {@code null} asks the first target's
 *     {@code GET /v1/models}
 * @param endpoint completions or chat
 * @param maxRequests cap on requests taken from the source, or -1 for no cap
 * @param maxDuration no request is issued later than this after the start
 * @param concurrencyCap safety cap on requests in flight; a request due while the cap is reached is
 *     dropped and counted, never delayed (delaying would close the loop)
 * @param requestTimeout whole-request timeout, connect to {@code [DONE]}
 * @param apiKey sent as {@code Authorization: Bearer}, or {@code null}
 * @param ignoreEos send vLLM's {@code ignore_eos: true} so every request produces {@code
 *     max_tokens} tokens
 * @param engineMetrics Prometheus endpoints of the engines, scraped before and after (may be empty)
 * @param targetPolicy how requests are spread over the targets
 * @param warmupPerTarget unmeasured requests sent to each target, one at a time, before the engine
 *     scrape and the start (as vLLM's benchmark sends one test prompt first): it fails fast on a
 *     wrong URL or model and loads the client's code, so the first measured requests are not sent
 *     late; 0 for none
 */
public record BenchConfig(
    List<URI> targets,
    String model,
    BenchEndpoint endpoint,
    int maxRequests,
    Duration maxDuration,
    int concurrencyCap,
    Duration requestTimeout,
    String apiKey,
    boolean ignoreEos,
    List<URI> engineMetrics,
    TargetPolicy targetPolicy,
    int warmupPerTarget) {

  public BenchConfig {
    if (targets == null || targets.isEmpty()) {
      throw new IllegalArgumentException("at least one target URL is required");
    }
    targets = List.copyOf(targets);
    engineMetrics = engineMetrics == null ? List.of() : List.copyOf(engineMetrics);
    if (endpoint == null) {
      throw new IllegalArgumentException("endpoint is required");
    }
    if (maxRequests < -1) {
      throw new IllegalArgumentException(
          "maxRequests must be >= 0 or -1 (no cap), got " + maxRequests);
    }
    if (maxDuration == null || maxDuration.isNegative()) {
      throw new IllegalArgumentException("maxDuration must be >= 0, got " + maxDuration);
    }
    if (concurrencyCap < 1) {
      throw new IllegalArgumentException("concurrencyCap must be >= 1, got " + concurrencyCap);
    }
    if (requestTimeout == null || requestTimeout.isZero() || requestTimeout.isNegative()) {
      throw new IllegalArgumentException("requestTimeout must be positive, got " + requestTimeout);
    }
    if (targetPolicy == null) {
      targetPolicy = TargetPolicy.ROUND_ROBIN;
    }
    if (warmupPerTarget < 0) {
      throw new IllegalArgumentException("warmupPerTarget must be >= 0, got " + warmupPerTarget);
    }
    if (apiKey != null && apiKey.isBlank()) {
      apiKey = null;
    }
  }

  /**
   * A configuration with defaults for everything but the targets and the model: completions, no
   * request cap, 10 minutes, cap 1024, 2-minute timeout, no key, no engine metrics, round robin, no
   * warm-up.
   */
  public static BenchConfig defaults(List<URI> targets, String model) {
    return new BenchConfig(
        targets,
        model,
        BenchEndpoint.COMPLETIONS,
        -1,
        Duration.ofMinutes(10),
        1024,
        Duration.ofMinutes(2),
        null,
        false,
        List.of(),
        TargetPolicy.ROUND_ROBIN,
        0);
  }

  /** A copy with another endpoint. */
  public BenchConfig withEndpoint(BenchEndpoint e) {
    return with(b -> b.endpoint = e);
  }

  /** A copy with other limits. */
  public BenchConfig withLimits(int requests, Duration duration, int cap, Duration timeout) {
    return with(
        b -> {
          b.maxRequests = requests;
          b.maxDuration = duration;
          b.concurrencyCap = cap;
          b.requestTimeout = timeout;
        });
  }

  /** A copy with another number of warm-up requests per target. */
  public BenchConfig withWarmup(int perTarget) {
    return with(b -> b.warmupPerTarget = perTarget);
  }

  /** A copy with another target policy. */
  public BenchConfig withTargetPolicy(TargetPolicy policy) {
    return with(b -> b.targetPolicy = policy);
  }

  /** A copy with other engine metrics endpoints. */
  public BenchConfig withEngineMetrics(List<URI> urls) {
    return with(b -> b.engineMetrics = urls);
  }

  /** Returns a copy with {@code change} applied to the builder of its components. */
  private BenchConfig with(Consumer<Builder> change) {
    Builder b = new Builder(this);
    change.accept(b);
    return b.build();
  }

  /** The components of a {@link BenchConfig} to change one or a few, as the withers do. */
  private static final class Builder {
    private List<URI> targets;
    private String model;
    private BenchEndpoint endpoint;
    private int maxRequests;
    private Duration maxDuration;
    private int concurrencyCap;
    private Duration requestTimeout;
    private String apiKey;
    private boolean ignoreEos;
    private List<URI> engineMetrics;
    private TargetPolicy targetPolicy;
    private int warmupPerTarget;

    private Builder(BenchConfig c) {
      targets = c.targets;
      model = c.model;
      endpoint = c.endpoint;
      maxRequests = c.maxRequests;
      maxDuration = c.maxDuration;
      concurrencyCap = c.concurrencyCap;
      requestTimeout = c.requestTimeout;
      apiKey = c.apiKey;
      ignoreEos = c.ignoreEos;
      engineMetrics = c.engineMetrics;
      targetPolicy = c.targetPolicy;
      warmupPerTarget = c.warmupPerTarget;
    }

    private BenchConfig build() {
      return new BenchConfig(
          targets,
          model,
          endpoint,
          maxRequests,
          maxDuration,
          concurrencyCap,
          requestTimeout,
          apiKey,
          ignoreEos,
          engineMetrics,
          targetPolicy,
          warmupPerTarget);
    }
  }
}
