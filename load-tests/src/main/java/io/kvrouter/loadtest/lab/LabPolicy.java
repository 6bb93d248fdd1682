package io.kvrouter.loadtest.lab;

import io.kvrouter.tracker.policy.Policies;
import io.kvrouter.tracker.policy.PolicyConfig;
import java.util.SplittableRandom;

/**
 * A policy as the lab runs it: a policy name, optionally with the suffix {@value #STRICT}, which
 * runs it in strict consistency mode (each decision admitted by the chosen replica's gate, {@link
 * LabGates}). {@code kvrouter/strict} is kvrouter's {@code kvrouter.consistency = strict}.
 *
 * @param policy the policy name ({@link Policies#names()})
 * @param strict decisions go through the replicas' admission gates
 */
public record LabPolicy(String policy, boolean strict) {

  /** Suffix of a policy run in strict mode. */
  public static final String STRICT = "/strict";

  /**
   * Parses {@code name} or {@code name/strict}.
   *
   * @throws IllegalArgumentException for an unknown policy, listing the known ones
   */
  public static LabPolicy parse(String name) {
    boolean strict = name.endsWith(STRICT);
    String policy = strict ? name.substring(0, name.length() - STRICT.length()) : name;
    if (policy.startsWith(Policies.TUNED) && !Policies.known(policy)) {
      // Say which setting is wrong, not only that the name is unknown.
      try {
        Policies.create(policy, PolicyConfig.defaults(), new SplittableRandom(0));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("policy '" + name + "': " + e.getMessage(), e);
      }
    }
    if (!Policies.known(policy)) {
      throw new IllegalArgumentException(
          "unknown policy '"
              + name
              + "'; known: "
              + String.join(", ", Policies.names())
              + " (each also as NAME"
              + STRICT
              + "), or "
              + Policies.TUNED
              + "SETTING=VALUE[@SETTING=VALUE...]");
    }
    return new LabPolicy(policy, strict);
  }

  /** The name it was parsed from. */
  public String label() {
    return strict ? policy + STRICT : policy;
  }
}
