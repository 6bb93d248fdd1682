package io.kvrouter.agent;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Locale;

/**
 * The alignment probe ({@code kvrouter.agent.alignment} in {@code reference.conf}, where each is
 * explained).
 *
 * @param probe whether the agent probes at all
 * @param refuseOnMismatch true: a mismatched replica is not registered; false: it is, with an
 *     ERROR, announced unaligned (trackers route to it by load alone)
 * @param timeout longest wait for the probe's completion and its BlockStored
 * @param blocks blocks the probe prompt spans
 */
public record AlignmentSettings(
    boolean probe, boolean refuseOnMismatch, Duration timeout, int blocks) {

  public AlignmentSettings {
    if (blocks < 1) {
      throw new IllegalArgumentException("alignment.blocks must be positive, was " + blocks);
    }
  }

  /** Reads {@code kvrouter.agent.alignment}. */
  public static AlignmentSettings fromConfig(Config c) {
    String onMismatch = c.getString("on-mismatch").toLowerCase(Locale.ROOT);
    if (!onMismatch.equals("refuse") && !onMismatch.equals("warn")) {
      throw new IllegalArgumentException(
          "kvrouter.agent.alignment.on-mismatch must be refuse or warn, was " + onMismatch);
    }
    return new AlignmentSettings(
        c.getBoolean("probe"),
        onMismatch.equals("refuse"),
        c.getDuration("timeout"),
        c.getInt("blocks"));
  }

  public AlignmentSettings withProbe(boolean on) {
    return new AlignmentSettings(on, refuseOnMismatch, timeout, blocks);
  }

  public AlignmentSettings withRefuseOnMismatch(boolean refuse) {
    return new AlignmentSettings(probe, refuse, timeout, blocks);
  }
}
