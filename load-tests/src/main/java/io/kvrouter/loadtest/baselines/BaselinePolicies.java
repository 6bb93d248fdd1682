package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.policy.BusyThresholds;
import io.kvrouter.tracker.policy.Policy;
import io.kvrouter.tracker.policy.PolicyProvider;
import io.kvrouter.tracker.policy.PolicySettings;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The peer baselines the lab judges kvrouter against, each as the peer ships ({@link
 * BaselineSettings#SHIPPED}), registered with the tracker's {@link
 * io.kvrouter.tracker.policy.Policies} through {@code META-INF/services}, so the lab, the demo and
 * the full command's ingress can run them by name; the node jar, without the lab, cannot.
 */
public final class BaselinePolicies implements PolicyProvider {

  /** The baselines the lab compares by default, in the order its reports list them. */
  private static final List<String> NAMES =
      List.of(
          "round_robin",
          "random",
          "least_loaded",
          "chwbl",
          "sglang_cache_aware",
          "tgi_trie",
          DynamoKvPolicy.NAME,
          LlmdPrecisePolicy.NAME,
          "preble_e2",
          VllmRouterKvPolicy.NAME);

  /** Baselines with a non-default setting, selectable by name but not run by default. */
  private static final List<String> VARIANTS =
      List.of(
          DynamoKvPolicy.OVERLAP_2,
          DynamoKvPolicy.DECODE,
          DynamoKvPolicy.V1_1,
          DynamoKvPolicy.SYNC,
          SglangCacheAwarePolicy.MESH,
          LlmdPrecisePolicy.V0_8_0,
          SglangCacheAwarePolicy.V1_9_0);

  /** The baselines the lab runs by default. */
  public static List<String> defaults() {
    return NAMES;
  }

  /** The variants, run only when named. */
  public static List<String> variants() {
    return VARIANTS;
  }

  @Override
  public List<String> names() {
    return java.util.stream.Stream.concat(NAMES.stream(), VARIANTS.stream()).toList();
  }

  @Override
  public Policy create(PolicySettings settings, BusyThresholds busy, RandomGenerator random) {
    BaselineSettings b = BaselineSettings.SHIPPED;
    String name = settings.baseName();
    return switch (name) {
      case "round_robin" -> new RoundRobinPolicy();
      case "random" -> new RandomPolicy(random);
      case "least_loaded" -> new LeastLoadedPolicy(random);
      case "chwbl" -> new ChwblPolicy(b);
      case SglangCacheAwarePolicy.NAME ->
          new SglangCacheAwarePolicy(
              name, SglangCacheAwarePolicy.Selection.MATCHED_HOLDERS, b, random);
      case SglangCacheAwarePolicy.V1_9_0 ->
          new SglangCacheAwarePolicy(name, SglangCacheAwarePolicy.Selection.FIRST_OWNER, b, random);
      case SglangCacheAwarePolicy.MESH ->
          new SglangCacheAwarePolicy(
              name, SglangCacheAwarePolicy.Selection.MATCHED_HOLDERS, b, random, true);
      case "tgi_trie" -> new TgiTriePolicy(random);
      case DynamoKvPolicy.NAME, DynamoKvPolicy.V1_1 ->
          new DynamoKvPolicy(
              name,
              b.dynamoOverlapWeight(),
              b.dynamoTemperature(),
              name.equals(DynamoKvPolicy.V1_1),
              random);
      case DynamoKvPolicy.SYNC ->
          new DynamoKvPolicy(
              name, b.dynamoOverlapWeight(), b.dynamoTemperature(), false, true, random);
      case DynamoKvPolicy.OVERLAP_2 ->
          new DynamoKvPolicy(name, 2.0, b.dynamoTemperature(), false, random);
      case DynamoKvPolicy.DECODE ->
          new DynamoKvPolicy(name, 0.0, b.dynamoTemperature(), false, random);
      case LlmdPrecisePolicy.NAME ->
          new LlmdPrecisePolicy(name, LlmdPrecisePolicy.PrefixScore.MATCHED_OVER_TOTAL, b, random);
      case LlmdPrecisePolicy.V0_8_0 ->
          new LlmdPrecisePolicy(
              name, LlmdPrecisePolicy.PrefixScore.MIN_MAX_OVER_HOLDERS, b, random);
      case "preble_e2" -> new PreblePolicy();
      case VllmRouterKvPolicy.NAME -> new VllmRouterKvPolicy();
      default -> throw new IllegalArgumentException("not a baseline: " + name);
    };
  }
}
