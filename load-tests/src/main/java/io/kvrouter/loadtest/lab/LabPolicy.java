package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.baselines.BaselinePolicies;
import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.PolicySettings;
import java.util.List;
import java.util.stream.Stream;

/**
 * A policy as the lab runs it: a policy name, optionally with the suffix {@value #STRICT}, which
 * runs it in strict consistency mode (each decision admitted by the chosen replica's gate, {@link
 * LabGates}). {@code kvrouter/strict} is kvrouter's {@code kvrouter.consistency = strict}. Program
 * features ({@link LabProgramFeatures}: {@code +warm}, {@code +las}) may follow; they do not change
 * the policy the routers run.
 *
 * @param policy the policy name ({@link Policies#names()})
 * @param strict decisions go through the replicas' admission gates
 */
public record LabPolicy(String policy, boolean strict) {

  /** Suffix of a policy run in strict mode. */
  public static final String STRICT = "/strict";

  /**
   * Parses {@code name} or {@code name/strict}, each possibly followed by program features.
   *
   * @throws IllegalArgumentException for an unknown policy, listing the known ones
   */
  public static LabPolicy parse(String label) {
    String name = LabProgramFeatures.strip(label);
    boolean strict = name.endsWith(STRICT);
    String policy = strict ? name.substring(0, name.length() - STRICT.length()) : name;
    if (!Policies.known(policy)) {
      throw new IllegalArgumentException(
          "unknown policy '"
              + name
              + "'; known: "
              + String.join(", ", Policies.names())
              + " (each also as NAME"
              + STRICT
              + "), or "
              + Policies.DEFAULT
              + "@KEY=VALUE[@KEY=VALUE...] with KEY a setting of "
              + PolicySettings.PATH);
    }
    if (policy.indexOf('@') >= 0) {
      // Say which setting is wrong, not only that the name is unknown.
      try {
        PolicySettings settings = PolicySettings.parse(policy);
        if (!settings.baseName().equals(Policies.DEFAULT)) {
          throw new IllegalArgumentException("only " + Policies.DEFAULT + " takes settings");
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("policy '" + name + "': " + e.getMessage(), e);
      }
    }
    return new LabPolicy(policy, strict);
  }

  /** The policies the lab compares when none are named: kvrouter, then the peers' baselines. */
  public static List<String> defaults() {
    return Stream.concat(Stream.of(Policies.DEFAULT), BaselinePolicies.defaults().stream())
        .toList();
  }

  /** The name it was parsed from. */
  public String label() {
    return strict ? policy + STRICT : policy;
  }
}
