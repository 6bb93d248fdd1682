package io.kvrouter.ingress.routing;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * How the ingress places requests for LoRA adapters, read once from {@code kvrouter.ingress.lora}
 * (where each setting is explained).
 *
 * @param loadPenaltyTokens what loading an adapter on a replica that lacks it costs, in prompt
 *     tokens of work ({@link io.kvrouter.tracker.steering.Steering#adapterLoadPenaltyTokens()})
 * @param loadWhereMissing true when the ingress loads an adapter on the replica it spreads it to
 *     ({@link AdapterLoader}); false when adapter requests go only to its holders
 * @param loadTimeout longest wait for a holder's model list and for the load
 * @param rememberLoaded how long an engine the ingress loaded an adapter on counts as holding it
 *     before its agent announces it ({@link AdapterLoader#loadedOn})
 */
public record LoraSettings(
    double loadPenaltyTokens,
    boolean loadWhereMissing,
    Duration loadTimeout,
    Duration rememberLoaded) {

  /** The defaults of {@code reference.conf}. */
  public static final LoraSettings DEFAULTS =
      new LoraSettings(4096, true, Duration.ofSeconds(30), Duration.ofSeconds(30));

  public LoraSettings {
    if (loadPenaltyTokens < 0) {
      throw new IllegalArgumentException(
          "load-penalty-tokens must be >= 0, was " + loadPenaltyTokens);
    }
  }

  /** Reads {@code kvrouter.ingress.lora}. */
  public static LoraSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.ingress.lora");
    return new LoraSettings(
        c.getDouble("load-penalty-tokens"),
        c.getBoolean("load-where-missing"),
        c.getDuration("load-timeout"),
        c.getDuration("remember-loaded"));
  }
}
