package io.kvrouter.ingress.traffic;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Traffic management settings, read once from {@code kvrouter.ingress.traffic} (every key is
 * described in the ingress's {@code reference.conf}).
 *
 * @param sessionHeader header naming a conversation (vLLM's router: {@code X-Session-ID})
 * @param priorityHeader header carrying a request's priority
 * @param ttftHeader header carrying a request's TTFT target in milliseconds
 * @param defaultPriority priority of requests that state none and whose tenant sets none
 * @param sessions session affinity
 * @param quantumTokens fair-queuing credit per round for a tenant of weight 1
 * @param fairHeadroom requests a replica may hold beyond its busy threshold for a tenant below its
 *     fair share while another tenant waits
 * @param retryAfter the {@code Retry-After} of a 429 from the router queue
 * @param peerHeadsRefresh how often this ingress tells the others what its queue waits with
 * @param peerHeadsTtl how long what another ingress told counts without being told again
 * @param peerHeadsCoalesce the least time between two tellings that only change running counts
 * @param tenants where tenants are configured
 * @param limits how per-tenant limits are counted across the cluster
 * @param sloBaseMillis the TTFT predictor's per-request overhead
 * @param sloMillisPerToken the TTFT predictor's prefill time per token
 */
public record TrafficSettings(
    String sessionHeader,
    String priorityHeader,
    String ttftHeader,
    int defaultPriority,
    Sessions sessions,
    long quantumTokens,
    int fairHeadroom,
    Duration retryAfter,
    Duration peerHeadsRefresh,
    Duration peerHeadsTtl,
    Duration peerHeadsCoalesce,
    Tenants tenants,
    Limits limits,
    double sloBaseMillis,
    double sloMillisPerToken) {

  /**
   * Session affinity.
   *
   * @param enabled off: session keys are ignored
   * @param affinityBonusTokens see {@code io.kvrouter.tracker.steering.Steering}
   * @param ttl a binding unused for this long is forgotten
   * @param refreshAfter a used binding older than this is written again (keeps it alive)
   * @param pruneInterval how often expired bindings are removed
   * @param shards how many Distributed Data keys the bindings are spread over
   * @param write how a new or moved binding is written: {@code all}, {@code majority}, {@code
   *     local}
   * @param writeTimeout how long a write waits for the other ingresses
   * @param lookupTimeout how long a request waits for its binding before routing without it
   */
  public record Sessions(
      boolean enabled,
      double affinityBonusTokens,
      Duration ttl,
      Duration refreshAfter,
      Duration pruneInterval,
      int shards,
      String write,
      Duration writeTimeout,
      Duration lookupTimeout) {}

  /**
   * @param file a HOCON file of tenants, re-read when it changes; empty for none
   * @param reloadInterval how often the file is checked for changes
   * @param anonymous the tenant of requests without an API key; empty: they get 401 (when tenants
   *     are configured at all)
   * @param inline tenants configured in place ({@code kvrouter.ingress.traffic.tenants.inline})
   */
  public record Tenants(String file, Duration reloadInterval, String anonymous, Config inline) {
    /** The file, or null. */
    public Path path() {
      return file.isBlank() ? null : Path.of(file);
    }
  }

  /**
   * @param write how usage is written: {@code all}, {@code majority}, {@code local}
   * @param writeTimeout how long a write waits for the other ingresses before the request proceeds
   * @param askTimeout how long a request waits for its limit check before it proceeds unchecked
   */
  public record Limits(String write, Duration writeTimeout, Duration askTimeout) {}

  /** Reads {@code kvrouter.ingress.traffic}. */
  public static TrafficSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.ingress.traffic");
    Config s = c.getConfig("sessions");
    Config t = c.getConfig("tenants");
    Config l = c.getConfig("limits");
    return new TrafficSettings(
        c.getString("headers.session"),
        c.getString("headers.priority"),
        c.getString("headers.ttft-target"),
        c.getInt("default-priority"),
        new Sessions(
            s.getBoolean("enabled"),
            s.getDouble("affinity-bonus-tokens"),
            s.getDuration("ttl"),
            s.getDuration("refresh-after"),
            s.getDuration("prune-interval"),
            s.getInt("shards"),
            consistency(s.getString("write")),
            s.getDuration("write-timeout"),
            s.getDuration("lookup-timeout")),
        c.getLong("queue.quantum-tokens"),
        c.getInt("queue.fair-headroom"),
        c.getDuration("queue.retry-after"),
        c.getDuration("queue.peer-heads-refresh"),
        c.getDuration("queue.peer-heads-ttl"),
        c.getDuration("queue.peer-heads-coalesce"),
        new Tenants(
            t.getString("file"),
            t.getDuration("reload-interval"),
            t.getString("anonymous"),
            t.getConfig("inline")),
        new Limits(
            consistency(l.getString("write")),
            l.getDuration("write-timeout"),
            l.getDuration("ask-timeout")),
        c.getDouble("slo.base-millis"),
        c.getDouble("slo.millis-per-token"));
  }

  private static String consistency(String value) {
    String v = value.toLowerCase(Locale.ROOT);
    if (!v.equals("all") && !v.equals("majority") && !v.equals("local")) {
      throw new IllegalArgumentException(
          "write consistency must be all, majority or local, was " + value);
    }
    return v;
  }
}
