package io.kvrouter.tracker.policy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.random.RandomGenerator;

/**
 * The policies this process can create, by name: kvrouter's own, and those of every {@link
 * PolicyProvider} on the class path (the lab's peer baselines, where the lab is present).
 */
public final class Policies {

  /** kvrouter's own policy, the default. */
  public static final String DEFAULT = KvRouterPolicyProvider.NAME;

  private Policies() {}

  /** Every policy name, the default first, then each provider's in class-path order. */
  public static List<String> names() {
    return new ArrayList<>(Registry.BY_NAME.keySet());
  }

  /** True for a name of {@link #names()}, with or without a variant's settings. */
  public static boolean known(String name) {
    int at = name.indexOf('@');
    return Registry.BY_NAME.containsKey(at < 0 ? name : name.substring(0, at));
  }

  /** What the policy named {@code name} may see ({@link Policy#visibility()}). */
  public static Visibility visibility(String name) {
    return create(PolicySettings.parse(name), BusyThresholds.DEFAULTS, () -> 0L).visibility();
  }

  /**
   * A new policy for {@code settings} (each keeps its own state).
   *
   * @throws IllegalArgumentException for an unknown name, listing the known ones
   */
  public static Policy create(
      PolicySettings settings, BusyThresholds busy, RandomGenerator random) {
    Objects.requireNonNull(busy, "busy");
    Objects.requireNonNull(random, "random");
    PolicyProvider provider = Registry.BY_NAME.get(settings.baseName());
    if (provider == null) {
      throw new IllegalArgumentException(
          "unknown policy '" + settings.name() + "'; known: " + String.join(", ", names()));
    }
    return provider.create(settings, busy, random);
  }

  /** The providers, found once. */
  private static final class Registry {
    static final Map<String, PolicyProvider> BY_NAME = load();

    private static Map<String, PolicyProvider> load() {
      Map<String, PolicyProvider> byName = new LinkedHashMap<>();
      KvRouterPolicyProvider own = new KvRouterPolicyProvider();
      own.names().forEach(n -> byName.put(n, own));
      for (PolicyProvider p : ServiceLoader.load(PolicyProvider.class)) {
        p.names().forEach(n -> byName.putIfAbsent(n, p));
      }
      return Collections.unmodifiableMap(byName);
    }
  }
}
