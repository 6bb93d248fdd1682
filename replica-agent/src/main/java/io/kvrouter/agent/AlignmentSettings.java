package io.kvrouter.agent;

import com.typesafe.config.Config;
import io.kvrouter.protocol.keys.SpeculativeDecoding;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The alignment probe ({@code kvrouter.agent.alignment} in {@code reference.conf}, where each is
 * explained).
 *
 * @param probe whether the agent probes at all
 * @param refuseOnMismatch true: a mismatched replica is not registered; false: it is, with an
 *     ERROR, announced unaligned (trackers route to it by load alone)
 * @param timeout longest wait for the probe's completion and its BlockStored
 * @param blocks blocks the probe prompt spans
 * @param speculative the router's speculative-decoding method per model ({@code
 *     kvrouter.models."m".speculative-method}): the probe checks that the engine reuses a cached
 *     prefix as that method predicts, and the replica is announced with it so trackers predict its
 *     hits so
 */
public record AlignmentSettings(
    boolean probe,
    boolean refuseOnMismatch,
    Duration timeout,
    int blocks,
    Function<String, SpeculativeDecoding> speculative) {

  /** Settings for models without speculative decoding. */
  public AlignmentSettings(boolean probe, boolean refuseOnMismatch, Duration timeout, int blocks) {
    this(probe, refuseOnMismatch, timeout, blocks, model -> SpeculativeDecoding.NONE);
  }

  public AlignmentSettings {
    if (blocks < 1) {
      throw new IllegalArgumentException("alignment.blocks must be positive, was " + blocks);
    }
    Objects.requireNonNull(speculative, "speculative");
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
    return new AlignmentSettings(on, refuseOnMismatch, timeout, blocks, speculative);
  }

  public AlignmentSettings withRefuseOnMismatch(boolean refuse) {
    return new AlignmentSettings(probe, refuse, timeout, blocks, speculative);
  }

  /** The same probe, with {@code perModel} as the router's speculative-decoding methods. */
  public AlignmentSettings withSpeculative(Function<String, SpeculativeDecoding> perModel) {
    return new AlignmentSettings(probe, refuseOnMismatch, timeout, blocks, perModel);
  }

  /**
   * The same probe, with the speculative-decoding methods {@code config}'s {@code kvrouter.models}
   * sets for {@code models}.
   *
   * @throws IllegalArgumentException naming the key when a method is unknown
   */
  public AlignmentSettings withSpeculative(Config config, Collection<String> models) {
    Map<String, SpeculativeDecoding> methods = new HashMap<>();
    for (String m : models) {
      methods.put(m, SpeculativeDecoding.forModel(config, m));
    }
    return withSpeculative(m -> methods.getOrDefault(m, SpeculativeDecoding.NONE));
  }
}
