package io.kvrouter.ingress.traffic;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueType;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.ApiException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Which API key belongs to which {@link Tenant}: tenants configured in place ({@code
 * kvrouter.ingress.traffic.tenants.inline}) and in a HOCON file that is re-read when it changes
 * ({@link #reloadIfChanged}, on a timer) or on demand ({@link #reload}, {@code POST
 * /admin/tenants/reload}). A file that does not parse leaves the tenants as they were.
 *
 * <p>A tenant entry (the file holds them under {@code tenants { }}):
 *
 * <pre>
 *   acme {
 *     keys = ["sk-acme-1", "sha256:9f86d08..."]   # plain keys or their SHA-256 in hex
 *     requests-per-minute = 600                    # 0 or absent: unlimited
 *     tokens-per-minute = 200000
 *     weight = 1                                   # share of the router queue
 *     priority = 0                                 # default priority of its requests
 *   }
 * </pre>
 *
 * With no tenant configured anywhere every request belongs to {@link Tenant#DEFAULT} and no key is
 * asked for. Keys are kept and compared only as SHA-256 digests.
 *
 * <p>Thread-safe: requests read an immutable directory; reloads (one at a time) swap it whole.
 */
public final class TenantRegistry {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(TenantRegistry.class);

  /** The tenants at one moment. */
  private record Directory(Map<String, Tenant> byKeyDigest, Map<String, Tenant> byId) {
    boolean enabled() {
      return !byId.isEmpty();
    }
  }

  private final TrafficSettings.Tenants settings;
  private final AtomicReference<Directory> current = new AtomicReference<>();
  private FileTime loadedStamp;

  private TenantRegistry(TrafficSettings.Tenants settings) {
    this.settings = settings;
  }

  /**
   * Reads the configured tenants.
   *
   * @throws IllegalArgumentException when they are inconsistent (a key of two tenants, an unknown
   *     anonymous tenant, a file that does not parse)
   */
  public static TenantRegistry fromSettings(TrafficSettings.Tenants settings) {
    TenantRegistry r = new TenantRegistry(settings);
    r.current.set(r.load());
    return r;
  }

  /** True when tenants are configured (and keys are asked for). */
  public boolean enabled() {
    return current.get().enabled();
  }

  /** The configured tenants by name. */
  public Map<String, Tenant> tenants() {
    return current.get().byId();
  }

  /**
   * The tenant of a request that presented {@code apiKey} (null when it presented none).
   *
   * @throws ApiException 401 when tenants are configured and the key is missing or unknown
   */
  public Tenant authenticate(String apiKey) {
    Directory d = current.get();
    if (!d.enabled()) {
      return Tenant.DEFAULT;
    }
    if (apiKey == null || apiKey.isBlank()) {
      Tenant anonymous = d.byId().get(settings.anonymous());
      if (anonymous != null) {
        return anonymous;
      }
      throw new ApiException(
          new ApiError(
              401,
              "You didn't provide an API key. Provide it in an Authorization header using Bearer"
                  + " auth (Authorization: Bearer YOUR_KEY) or in an x-api-key header.",
              "invalid_request_error",
              null,
              "invalid_api_key",
              0));
    }
    Tenant t = d.byKeyDigest().get(sha256(apiKey.trim()));
    if (t == null) {
      throw new ApiException(
          new ApiError(
              401,
              "Incorrect API key provided: " + redact(apiKey.trim()) + ".",
              "invalid_request_error",
              null,
              "invalid_api_key",
              0));
    }
    return t;
  }

  /**
   * Reads the tenants again now; returns how many there are.
   *
   * @throws IllegalArgumentException when they do not parse (the previous ones stay)
   */
  public synchronized int reload() {
    Directory d = load();
    current.set(d);
    LOG.info("tenants reloaded: {}", d.byId().keySet());
    return d.byId().size();
  }

  /** Reloads when the file changed since it was last read; a broken file is logged and ignored. */
  public synchronized void reloadIfChanged() {
    Path path = settings.path();
    if (path == null) {
      return;
    }
    try {
      FileTime stamp = Files.exists(path) ? Files.getLastModifiedTime(path) : null;
      if (stamp != null && !stamp.equals(loadedStamp)) {
        reload();
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("tenants file {} not reloaded: {}", path, e.getMessage());
    }
  }

  private Directory load() {
    Map<String, Config> entries = new HashMap<>();
    collect(settings.inline(), entries);
    Path path = settings.path();
    if (path != null) {
      try {
        loadedStamp = Files.getLastModifiedTime(path);
        Config file = ConfigFactory.parseFile(path.toFile()).resolve();
        if (file.hasPath("tenants")) {
          collect(file.getConfig("tenants"), entries);
        }
      } catch (IOException | RuntimeException e) {
        throw new IllegalArgumentException("cannot read tenants file " + path + ": " + e, e);
      }
    }
    Map<String, Tenant> byId = new HashMap<>();
    Map<String, Tenant> byKey = new HashMap<>();
    entries.forEach(
        (id, c) -> {
          Tenant t =
              new Tenant(
                  id,
                  c.hasPath("requests-per-minute") ? c.getLong("requests-per-minute") : 0,
                  c.hasPath("tokens-per-minute") ? c.getLong("tokens-per-minute") : 0,
                  c.hasPath("weight") ? c.getDouble("weight") : 1.0,
                  c.hasPath("priority") ? c.getInt("priority") : null);
          byId.put(id, t);
          List<String> keys = c.hasPath("keys") ? c.getStringList("keys") : List.of();
          for (String key : keys) {
            String digest =
                key.startsWith("sha256:")
                    ? key.substring("sha256:".length()).toLowerCase(java.util.Locale.ROOT)
                    : sha256(key);
            Tenant other = byKey.put(digest, t);
            if (other != null && !other.id().equals(id)) {
              throw new IllegalArgumentException(
                  "an API key belongs to two tenants: " + other.id() + " and " + id);
            }
          }
        });
    String anonymous = settings.anonymous();
    if (!anonymous.isBlank() && !byId.isEmpty() && !byId.containsKey(anonymous)) {
      throw new IllegalArgumentException("anonymous tenant '" + anonymous + "' is not configured");
    }
    return new Directory(Map.copyOf(byKey), Map.copyOf(byId));
  }

  private static void collect(Config tenants, Map<String, Config> into) {
    for (String id : tenants.root().keySet()) {
      if (tenants.root().get(id).valueType() != ConfigValueType.OBJECT) {
        throw new IllegalArgumentException("tenant '" + id + "' must be an object");
      }
      into.put(id, tenants.getConfig("\"" + id + "\""));
    }
  }

  static String sha256(String key) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /** {@code sk-abc***xyz}: enough for its owner to recognise, not enough to use. */
  private static String redact(String key) {
    return key.length() <= 8
        ? "***"
        : key.substring(0, 3) + "***" + key.substring(key.length() - 3);
  }
}
