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
 * @param migrationLimit how many times one stream cut by its engine may continue on another replica
 *     ({@link StreamMigration}); 0 turns migration off
 * @param stallTimeout how long a stream may go without a byte before its engine counts as dead
 */
public record ProxySettings(
    int maxAttempts,
    Duration firstByteTimeout,
    Duration requestTimeout,
    int queueCapacity,
    Duration queueMaxWait,
    Duration queueRecheck,
    boolean routeHeaders,
    int migrationLimit,
    Duration stallTimeout) {

  public ProxySettings {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
    }
    if (migrationLimit < 0) {
      throw new IllegalArgumentException("migrationLimit must be >= 0, was " + migrationLimit);
    }
    if (stallTimeout.isNegative() || stallTimeout.isZero()) {
      throw new IllegalArgumentException("stallTimeout must be positive, was " + stallTimeout);
    }
  }
}
