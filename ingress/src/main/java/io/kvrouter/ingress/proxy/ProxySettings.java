package io.kvrouter.ingress.proxy;

import java.time.Duration;

/**
 * How the proxy talks to replicas.
 *
 * @param maxAttempts replicas tried per request before giving up (1 = no retry)
 * @param firstByteTimeout how long a replica may take to answer (status and headers) before the
 *     attempt counts as failed and the next replica is tried
 * @param requestTimeout how long a whole non-streaming response may take
 */
public record ProxySettings(int maxAttempts, Duration firstByteTimeout, Duration requestTimeout) {

  public ProxySettings {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
    }
  }
}
