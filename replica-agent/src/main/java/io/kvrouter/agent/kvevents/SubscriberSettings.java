package io.kvrouter.agent.kvevents;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;

/**
 * How one engine's KV-event subscriber waits, retries and gives up ({@code
 * kvrouter.agent.kv-events} in {@code reference.conf}, where each is explained).
 *
 * @param pollInterval longest wait on the SUB socket before the subscriber looks at its other work
 * @param replayTimeout longest wait for a whole answer to one replay request
 * @param replayRetry wait before a replay that went unanswered is asked again
 * @param silence live silence after which the replay socket is asked for anything newer
 * @param giveUpAfter how long live batches may wait behind an unanswered replay before the missing
 *     batches are declared lost (a new epoch) and the waiting ones delivered, and how long an
 *     interruption may wait for a replay answer before the replica starts afresh (a new epoch)
 * @param maxHeld most live batches that may wait behind an unanswered replay
 * @param auditDepth delivered batches compared with the engine's replay buffer at each audit
 * @param receiveHighWaterMark live messages the SUB socket queues before ZMQ drops them
 * @param restartBackoff wait before the subscriber's thread starts again after an unexpected
 *     failure; doubled after each failure in a row
 * @param restartBackoffMax longest such wait
 */
public record SubscriberSettings(
    Duration pollInterval,
    Duration replayTimeout,
    Duration replayRetry,
    Duration silence,
    Duration giveUpAfter,
    int maxHeld,
    int auditDepth,
    int receiveHighWaterMark,
    Duration restartBackoff,
    Duration restartBackoffMax) {

  public SubscriberSettings {
    if (maxHeld < 1 || auditDepth < 1) {
      throw new IllegalArgumentException(
          "max-held and audit-depth must be positive, were " + maxHeld + ", " + auditDepth);
    }
    if (restartBackoff.isNegative() || restartBackoffMax.compareTo(restartBackoff) < 0) {
      throw new IllegalArgumentException(
          "need 0 <= restart-backoff <= restart-backoff-max, were "
              + restartBackoff
              + ", "
              + restartBackoffMax);
    }
  }

  /** Reads {@code kvrouter.agent.kv-events}. */
  public static SubscriberSettings fromConfig(Config c) {
    return new SubscriberSettings(
        c.getDuration("poll-interval"),
        c.getDuration("replay-timeout"),
        c.getDuration("replay-retry"),
        c.getDuration("silence"),
        c.getDuration("give-up-after"),
        c.getInt("max-held"),
        c.getInt("audit-depth"),
        c.getInt("receive-high-water-mark"),
        c.getDuration("restart-backoff"),
        c.getDuration("restart-backoff-max"));
  }

  /** The defaults of {@code reference.conf}, for code that builds a subscriber by hand. */
  public static SubscriberSettings defaults() {
    return fromConfig(ConfigFactory.defaultReference().getConfig("kvrouter.agent.kv-events"));
  }

  public SubscriberSettings withReplayTimeout(Duration timeout) {
    return new SubscriberSettings(
        pollInterval,
        timeout,
        replayRetry,
        silence,
        giveUpAfter,
        maxHeld,
        auditDepth,
        receiveHighWaterMark,
        restartBackoff,
        restartBackoffMax);
  }
}
