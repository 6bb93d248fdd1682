package io.kvrouter.tracker.policy;

import java.util.List;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Creates policies by name: the names the lab compares by default ({@link #names()}) and variants
 * worth showing on request ({@link #variants()}).
 */
public final class Policies {

  /** kvrouter's own policy, the default. */
  public static final String DEFAULT = "kvrouter";

  private static final List<String> NAMES =
      List.of(
          "kvrouter",
          "round_robin",
          "random",
          "least_loaded",
          "chwbl",
          "sglang_cache_aware",
          "tgi_trie",
          "dynamo_kv",
          "llmd_precise",
          "preble_e2");

  /**
   * Baselines with a non-default setting, selectable by name but not run by default. The {@code
   * kvrouter_<concurrency>} ones are the default policy with that concurrency mode and without
   * intents: each tie rule alone, as it was measured.
   */
  private static final List<String> VARIANTS =
      List.of(
          DynamoKvPolicy.OVERLAP_2,
          "kvrouter_v1",
          "kvrouter_off",
          "kvrouter_random",
          "kvrouter_turns",
          "kvrouter_unseen",
          "kvrouter_own");

  /**
   * Prefix of a kvrouter variant with some of its parameters changed ({@link
   * KvRouterConfig#with(String)}), e.g. {@code kvrouter@workWeight=1.5@tieMillis=20}: selectable by
   * name for a side-by-side measurement, never run by default.
   */
  public static final String TUNED = "kvrouter@";

  private Policies() {}

  /** Every policy name, the default first. */
  public static List<String> names() {
    return NAMES;
  }

  /** Variants of the baselines, created by name like the others. */
  public static List<String> variants() {
    return VARIANTS;
  }

  /** True for a name of {@link #names()} or {@link #variants()}, or a valid {@link #TUNED} one. */
  public static boolean known(String name) {
    if (name.startsWith(TUNED)) {
      try {
        tuned(PolicyConfig.defaults(), name);
        return true;
      } catch (IllegalArgumentException e) {
        return false;
      }
    }
    return NAMES.contains(name) || VARIANTS.contains(name);
  }

  private static PolicyConfig tuned(PolicyConfig config, String name) {
    return config.withKvRouter(config.kvrouter().with(name.substring(TUNED.length())));
  }

  /** What the policy named {@code name} may see (see {@link Policy#visibility()}). */
  public static Visibility visibility(String name) {
    return create(name, PolicyConfig.defaults(), Ranking.NO_RANDOMNESS).visibility();
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
    if (name.startsWith(TUNED)) {
      return new TtftPolicy(name, tuned(config, name), random);
    }
    return switch (name) {
      case "kvrouter" -> new TtftPolicy("kvrouter", config, random);
      case "kvrouter_v1" -> new KvRouterV1Policy(config, random);
      case "kvrouter_off", "kvrouter_random", "kvrouter_turns", "kvrouter_unseen", "kvrouter_own" ->
          new TtftPolicy(
              name,
              config.withKvRouter(
                  config
                      .kvrouter()
                      .withConcurrency(name.substring("kvrouter_".length()))
                      .with("intents=false")),
              random);
      case "round_robin" -> new RoundRobinPolicy();
      case "random" -> new RandomPolicy(random);
      case "least_loaded" -> new LeastLoadedPolicy(random);
      case "chwbl" -> new ChwblPolicy(config);
      case "sglang_cache_aware" -> new SglangCacheAwarePolicy(config);
      case "tgi_trie" -> new TgiTriePolicy(random);
      case DynamoKvPolicy.NAME ->
          new DynamoKvPolicy(
              name, config.dynamoOverlapWeight(), config.dynamoTemperature(), random);
      case DynamoKvPolicy.OVERLAP_2 ->
          new DynamoKvPolicy(name, 2.0, config.dynamoTemperature(), random);
      case "llmd_precise" -> new LlmdPrecisePolicy(config, random);
      case "preble_e2" -> new PreblePolicy();
      default ->
          throw new IllegalArgumentException(
              "unknown policy '"
                  + name
                  + "'; known: "
                  + String.join(", ", NAMES)
                  + " (variants: "
                  + String.join(", ", VARIANTS)
                  + ")");
    };
  }
}
