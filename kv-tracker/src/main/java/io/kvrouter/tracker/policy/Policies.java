package io.kvrouter.tracker.policy;

import java.util.List;
import java.util.Objects;
import java.util.random.RandomGenerator;

/** Creates policies by name; the names the lab and the configuration list. */
public final class Policies {

  /** kvrouter's own policy, the default. */
  public static final String DEFAULT = "kvrouter";

  private static final List<String> NAMES =
      List.of(
          "kvrouter",
          "kvrouter_v1",
          "round_robin",
          "random",
          "least_loaded",
          "chwbl",
          "sglang_cache_aware",
          "tgi_trie",
          "dynamo_kv",
          "llmd_precise",
          "preble_e2");

  private Policies() {}

  /** Every policy name, the default first. */
  public static List<String> names() {
    return NAMES;
  }

  /**
   * A new policy instance (each keeps its own state).
   *
   * @param random the only source of randomness the policy uses; seed it for reproducible runs
   * @throws IllegalArgumentException for an unknown name, listing the known ones
   */
  public static Policy create(String name, PolicyConfig config, RandomGenerator random) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(random, "random");
    return switch (name) {
      case "kvrouter" -> new TtftPolicy(config, random);
      case "kvrouter_v1" -> new KvRouterV1Policy(config, random);
      case "round_robin" -> new RoundRobinPolicy();
      case "random" -> new RandomPolicy(random);
      case "least_loaded" -> new LeastLoadedPolicy(random);
      case "chwbl" -> new ChwblPolicy(config);
      case "sglang_cache_aware" -> new SglangCacheAwarePolicy(config, random);
      case "tgi_trie" -> new TgiTriePolicy(config);
      case "dynamo_kv" -> new DynamoKvPolicy(config, random);
      case "llmd_precise" -> new LlmdPrecisePolicy(config, random);
      case "preble_e2" -> new PreblePolicy(config, random);
      default ->
          throw new IllegalArgumentException(
              "unknown policy '" + name + "'; known: " + String.join(", ", NAMES));
    };
  }
}
