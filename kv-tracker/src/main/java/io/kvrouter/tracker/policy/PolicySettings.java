package io.kvrouter.tracker.policy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValueType;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The {@code kvrouter.tracker.policy} block: which policy routes and the kvrouter policy's
 * settings, read once from HOCON ({@link #fromConfig}). The defaults live in kv-tracker's {@code
 * reference.conf}, one line of "what" per key; docs/policy.md says what each rule does and how it
 * was chosen.
 *
 * @param name the policy's name as {@link Policies} creates it (a lab variant may carry settings
 *     after an {@code @}, see {@link #parse})
 * @param cost what a candidate costs: {@code kvrouter.tracker.policy.cost}
 * @param timing the engines' timing model: {@code timing}
 * @param lag the charge on a replica slower than predicted: {@code lag}
 * @param ties near-ties and how routers spread them: {@code ties}
 * @param peers what a router believes of its peers: {@code peers}
 * @param hold how long a decision waits for the smaller ones of its instant: {@code hold}
 * @param cold where a prompt no replica holds starts: {@code cold}
 * @param intents held requests announced to the peers: {@code intents}
 */
public record PolicySettings(
    String name,
    Cost cost,
    Timing timing,
    Lag lag,
    Ties ties,
    Peers peers,
    Hold hold,
    Cold cold,
    Intents intents) {

  /** The path of the block in a node's configuration. */
  public static final String PATH = "kvrouter.tracker.policy";

  /**
   * @param chunkTokens prefill tokens per engine pass ({@code max_num_batched_tokens})
   * @param workWeight weight of the compute a request's uncached tokens take from the replica
   * @param sessionWork that weight's factor for a request opening a session with a cached prefix
   * @param sessionShare exponent of a replica's share of recent writes scaling such a request's
   *     work
   * @param sessionShareMax the most that scaled share may be (1: a replica written more than the
   *     mean is charged as one written the mean)
   * @param sessionExcess weight of the queueing a replica's recent work beyond the candidates' mean
   *     makes a later request meet, charged to a request opening a session with a cached prefix
   *     ({@link RecentWork}; 0: off)
   * @param sessionExcessHalfLifeMillis half-life of the recent work that charge counts, ms
   * @param coldMatchShare a prompt no replica holds this share of is placed as if none held any
   * @param predictedCredit a predicted (reserved, unconfirmed) block counts this much cached
   * @param diskCredit a disk-tier block counts this much cached
   * @param cpuLoadMicrosPerToken time to load one token's KV back from a CPU tier, µs
   */
  public record Cost(
      int chunkTokens,
      double workWeight,
      double sessionWork,
      double sessionShare,
      double sessionShareMax,
      double sessionExcess,
      double sessionExcessHalfLifeMillis,
      double coldMatchShare,
      double predictedCredit,
      double diskCredit,
      double cpuLoadMicrosPerToken) {
    public Cost {
      positive("cost.chunk-tokens", chunkTokens);
      notNegative("cost.work-weight", workWeight);
      notNegative("cost.session-work", sessionWork);
      notNegative("cost.session-share", sessionShare);
      notNegative("cost.session-excess", sessionExcess);
      if (!(sessionExcessHalfLifeMillis > 0)) {
        throw new IllegalArgumentException(
            "cost.session-excess-half-life must be positive, was " + sessionExcessHalfLifeMillis);
      }
      if (!(sessionShareMax >= 1)) {
        throw new IllegalArgumentException(
            "cost.session-share-max must be at least 1, was " + sessionShareMax);
      }
      if (!(coldMatchShare >= 0 && coldMatchShare < 1)) {
        throw new IllegalArgumentException(
            "cost.cold-match-share must be in [0, 1), was " + coldMatchShare);
      }
      notNegative("cost.predicted-credit", predictedCredit);
      notNegative("cost.disk-credit", diskCredit);
      notNegative("cost.cpu-load-per-token", cpuLoadMicrosPerToken);
    }
  }

  /**
   * @param fit fit the engines' timing online from observed first tokens (off: the prior)
   * @param forgetting the fit's forgetting factor per observation
   */
  public record Timing(boolean fit, double forgetting) {
    public Timing {
      if (!(forgetting > 0 && forgetting <= 1)) {
        throw new IllegalArgumentException(
            "timing.forgetting must be in (0, 1], was " + forgetting);
      }
    }
  }

  /**
   * @param fromMillis lateness beyond prediction that starts to be charged
   * @param halfLifeMillis the charge halves every this long without a first token (0: off)
   * @param warmup first tokens per replica (and per engine restart) not counted
   */
  public record Lag(double fromMillis, double halfLifeMillis, int warmup) {
    public Lag {
      notNegative("lag.from", fromMillis);
      notNegative("lag.half-life", halfLifeMillis);
      notNegative("lag.warmup", warmup);
    }
  }

  /**
   * @param spread make concurrent routers' decisions diverge (off: each router alone, the first of
   *     equal candidates; herding, for comparison)
   * @param bandMillis predicted TTFTs within this of the best are near-ties
   * @param relative predicted TTFTs within this fraction of the best are near-ties
   * @param unseenBand among several routers the band is at least this many typical requests'
   *     compute
   * @param strictFirst in strict mode, the near-tie with the fewest requests in flight
   * @param blindMillis a new prefix's near-ties are found without the peers' reservations of this
   *     long (or two late delays, if longer)
   */
  public record Ties(
      boolean spread,
      double bandMillis,
      double relative,
      double unseenBand,
      boolean strictFirst,
      double blindMillis) {
    public Ties {
      notNegative("ties.band", bandMillis);
      notNegative("ties.relative", relative);
      notNegative("ties.unseen-band", unseenBand);
      notNegative("ties.blind", blindMillis);
    }
  }

  /**
   * @param rotationMillis routers' turns rotate this often
   * @param horizonMillis a peer not heard from this long no longer counts
   * @param maxDelayMillis the largest propagation delay believed
   * @param delayPriorMillis the propagation delay assumed before one was observed
   */
  public record Peers(
      long rotationMillis, long horizonMillis, long maxDelayMillis, double delayPriorMillis) {
    public Peers {
      positive("peers.rotation", rotationMillis);
      positive("peers.horizon", horizonMillis);
      positive("peers.max-delay", maxDelayMillis);
      notNegative("peers.delay-prior", delayPriorMillis);
    }
  }

  /**
   * @param fromMillis a request whose uncached prefill takes this long waits (0: off)
   * @param classes size classes (doublings from {@code fromMillis}) that wait longer
   * @param step one class's wait, in late propagation delays
   * @param maxMillis the longest wait
   * @param soloMillis a lone router's wait per class (0: off)
   * @param burstFromMillis the threshold while requests come in bursts (0: off)
   * @param burstStep one class's wait in bursts, in late propagation delays
   * @param burstConcurrency peer decisions per own decision within a delay that make a burst
   */
  public record Hold(
      double fromMillis,
      int classes,
      double step,
      double maxMillis,
      double soloMillis,
      double burstFromMillis,
      double burstStep,
      double burstConcurrency) {
    public Hold {
      notNegative("hold.from", fromMillis);
      notNegative("hold.classes", classes);
      notNegative("hold.step", step);
      notNegative("hold.max", maxMillis);
      notNegative("hold.solo", soloMillis);
      notNegative("hold.burst.from", burstFromMillis);
      notNegative("hold.burst.step", burstStep);
      notNegative("hold.burst.concurrency", burstConcurrency);
    }
  }

  /**
   * @param leadFromMillis among several routers, a new prefix this long to compute waits for the
   *     routers before this one in turn (0: off)
   * @param lookMillis the first of a burst waits this long for company
   * @param followShare a held prompt whose started prefix is this share of it follows that prefix
   *     whatever the cost (0: by cost)
   * @param soloByLoad a lone router starts a new prefix on the least loaded near-tie
   * @param familyHalfLifeMillis half-life of the count of prefixes started per replica (0: count
   *     requests in flight instead)
   * @param soloBurstByFamilies a lone router's burst of new prefixes goes where the fewest were
   *     started, of all replicas not busy
   */
  public record Cold(
      double leadFromMillis,
      double lookMillis,
      double followShare,
      boolean soloByLoad,
      double familyHalfLifeMillis,
      boolean soloBurstByFamilies) {
    public Cold {
      notNegative("cold.lead-from", leadFromMillis);
      notNegative("cold.look", lookMillis);
      if (!(followShare >= 0 && followShare <= 1)) {
        throw new IllegalArgumentException(
            "cold.follow-share must be in [0, 1], was " + followShare);
      }
      notNegative("cold.family-half-life", familyHalfLifeMillis);
    }
  }

  /**
   * @param enabled hold long requests one delay and announce them to the peers
   * @param fromMillis only a request whose uncached prefill takes this long is announced
   */
  public record Intents(boolean enabled, double fromMillis) {
    public Intents {
      notNegative("intents.from", fromMillis);
    }
  }

  public PolicySettings {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(cost, "cost");
    Objects.requireNonNull(timing, "timing");
    Objects.requireNonNull(lag, "lag");
    Objects.requireNonNull(ties, "ties");
    Objects.requireNonNull(peers, "peers");
    Objects.requireNonNull(hold, "hold");
    Objects.requireNonNull(cold, "cold");
    Objects.requireNonNull(intents, "intents");
  }

  /** The defaults of kv-tracker's {@code reference.conf}. */
  public static PolicySettings defaults() {
    return Defaults.SETTINGS;
  }

  /**
   * Reads a {@code kvrouter.tracker.policy} block ({@code block} is the block itself, its missing
   * keys taken from the defaults).
   *
   * @throws IllegalArgumentException naming the key, for a missing, malformed or invalid value
   */
  public static PolicySettings fromConfig(Config block) {
    Config c = block.withFallback(Defaults.BLOCK);
    try {
      return new PolicySettings(
          c.getString("name"),
          new Cost(
              c.getInt("cost.chunk-tokens"),
              c.getDouble("cost.work-weight"),
              c.getDouble("cost.session-work"),
              c.getDouble("cost.session-share"),
              c.getDouble("cost.session-share-max"),
              c.getDouble("cost.session-excess"),
              millis(c, "cost.session-excess-half-life"),
              c.getDouble("cost.cold-match-share"),
              c.getDouble("cost.predicted-credit"),
              c.getDouble("cost.disk-credit"),
              c.getDuration("cost.cpu-load-per-token", TimeUnit.NANOSECONDS) / 1000.0),
          new Timing(c.getBoolean("timing.fit"), c.getDouble("timing.forgetting")),
          new Lag(millis(c, "lag.from"), millis(c, "lag.half-life"), c.getInt("lag.warmup")),
          new Ties(
              c.getBoolean("ties.spread"),
              millis(c, "ties.band"),
              c.getDouble("ties.relative"),
              c.getDouble("ties.unseen-band"),
              c.getBoolean("ties.strict-first"),
              millis(c, "ties.blind")),
          new Peers(
              c.getDuration("peers.rotation", TimeUnit.MILLISECONDS),
              c.getDuration("peers.horizon", TimeUnit.MILLISECONDS),
              c.getDuration("peers.max-delay", TimeUnit.MILLISECONDS),
              millis(c, "peers.delay-prior")),
          new Hold(
              millis(c, "hold.from"),
              c.getInt("hold.classes"),
              c.getDouble("hold.step"),
              millis(c, "hold.max"),
              millis(c, "hold.solo"),
              millis(c, "hold.burst.from"),
              c.getDouble("hold.burst.step"),
              c.getDouble("hold.burst.concurrency")),
          new Cold(
              millis(c, "cold.lead-from"),
              millis(c, "cold.look"),
              c.getDouble("cold.follow-share"),
              c.getBoolean("cold.solo-by-load"),
              millis(c, "cold.family-half-life"),
              c.getBoolean("cold.solo-burst-by-families")),
          new Intents(c.getBoolean("intents.enabled"), millis(c, "intents.from")));
    } catch (ConfigException e) {
      throw new IllegalArgumentException(PATH + ": " + e.getMessage(), e);
    }
  }

  /**
   * Settings by name, for the lab and tests: {@code NAME} alone is that policy with the defaults;
   * {@code NAME@KEY=VALUE[@KEY=VALUE...]} changes settings by their path in the block (e.g. {@code
   * kvrouter@hold.from=0@intents.enabled=off}), the whole string being the policy's name, so a
   * variant is measured beside the default in one run.
   *
   * @throws IllegalArgumentException for a setting that is not {@code KEY=VALUE}, an unknown key or
   *     an invalid value
   */
  public static PolicySettings parse(String name) {
    int at = name.indexOf('@');
    if (at < 0) {
      return defaults().withName(name);
    }
    StringBuilder hocon = new StringBuilder();
    for (String setting : name.substring(at + 1).split("@")) {
      int eq = setting.indexOf('=');
      String key = eq < 0 ? "" : setting.substring(0, eq);
      if (eq < 0 || !isSetting(key)) {
        throw new IllegalArgumentException(
            "policy setting '" + setting + "' is not KEY=VALUE with KEY a setting of " + PATH);
      }
      hocon.append(key).append(" = \"").append(setting.substring(eq + 1)).append("\"\n");
    }
    return fromConfig(ConfigFactory.parseString(hocon.toString())).withName(name);
  }

  /** Whether {@code key} names one setting of the block (not a group, not the name). */
  private static boolean isSetting(String key) {
    try {
      return !key.equals("name")
          && Defaults.BLOCK.hasPath(key)
          && Defaults.BLOCK.getValue(key).valueType() != ConfigValueType.OBJECT;
    } catch (ConfigException e) {
      return false; // not a path at all
    }
  }

  /** The name without a variant's settings: the policy {@link Policies} creates. */
  public String baseName() {
    int at = name.indexOf('@');
    return at < 0 ? name : name.substring(0, at);
  }

  /** The same settings under another name. */
  public PolicySettings withName(String other) {
    return new PolicySettings(other, cost, timing, lag, ties, peers, hold, cold, intents);
  }

  /** The same with concurrent decisions no longer spread nor announced (herding, to compare). */
  public PolicySettings withoutSpreading() {
    return new PolicySettings(
        name,
        cost,
        timing,
        lag,
        new Ties(
            false,
            ties.bandMillis(),
            ties.relative(),
            ties.unseenBand(),
            ties.strictFirst(),
            ties.blindMillis()),
        peers,
        hold,
        cold,
        new Intents(false, intents.fromMillis()));
  }

  private static double millis(Config c, String path) {
    Duration d = c.getDuration(path);
    return d.toNanos() / 1e6;
  }

  private static void positive(String key, long value) {
    if (value < 1) {
      throw new IllegalArgumentException(key + " must be positive, was " + value);
    }
  }

  private static void notNegative(String key, double value) {
    if (!(value >= 0)) {
      throw new IllegalArgumentException(key + " must be >= 0, was " + value);
    }
  }

  /**
   * The reference defaults, read once: every {@code reference.conf} on the class path, without the
   * system properties a node's configuration lays over them.
   */
  private static final class Defaults {
    static final Config BLOCK =
        ConfigFactory.parseResources(PolicySettings.class.getClassLoader(), "reference.conf")
            .resolve(ConfigResolveOptions.defaults().setAllowUnresolved(true))
            .getConfig(PATH);
    static final PolicySettings SETTINGS = fromConfig(BLOCK);
  }
}
