package io.kvrouter.ingress.proxy;

import java.time.Duration;

/**
 * How the proxy talks to replicas.
 *
 * @param maxAttempts replicas tried per request before giving up (1 = no retry)
 * @param firstByteTimeout how long a replica may take to answer (status and first body byte) before
 *     the attempt counts as failed and the next replica is tried
 * @param requestTimeout how long a whole non-streaming response may take
 * @param queueCapacity requests that may wait while every replica is busy; beyond: 429
 * @param queueMaxWait how long one request may wait in that queue before 429
 * @param queueRecheck how often a waiting request asks the router again
 * @param routeHeaders whether answers carry the {@link RouteHeaders} that say where they went
 */
public record ProxySettings(
    int maxAttempts,
    Duration firstByteTimeout,
    Duration requestTimeout,
    int queueCapacity,
    Duration queueMaxWait,
    Duration queueRecheck,
    boolean routeHeaders) {

  public ProxySettings {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
    }
  }
}
