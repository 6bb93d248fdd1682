package io.kvrouter.ingress.metrics;

import com.typesafe.config.Config;

/**
 * How index accuracy is judged ({@link PredictionAccuracy}), read once from {@code
 * kvrouter.ingress.accuracy} (documented in the ingress's {@code reference.conf}).
 *
 * @param window requests remembered per replica
 * @param minSamples requests needed before a replica may be flagged
 * @param toleranceTokens smallest disagreement between predicted and reported cached tokens that
 *     counts (one block); 10 % of the prompt when that is more
 */
public record AccuracySettings(int window, int minSamples, int toleranceTokens) {

  /** Reads {@code kvrouter.ingress.accuracy} from {@code config}. */
  public static AccuracySettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.ingress.accuracy");
    return new AccuracySettings(
        c.getInt("window"), c.getInt("min-samples"), c.getInt("tolerance-tokens"));
  }
}
