package io.kvrouter.ingress.http;

import com.typesafe.config.Config;
import io.kvrouter.ingress.proxy.ProxySettings;
import java.time.Duration;

/**
 * The ingress's HTTP settings, read once from {@code kvrouter.ingress} at start-up.
 *
 * @param host interface the HTTP server binds
 * @param port HTTP port (0 picks a free one)
 * @param maxBodyBytes request bodies above this get 413
 * @param bodyReadTimeout how long a client may take to send its body
 * @param proxy how replicas are called
 * @param adminToken bearer token the {@code /admin} endpoints require; empty for none
 * @param defaultModel the model whose tokenizer serves a model that replicas serve but the
 *     configuration does not list
 * @param debugEndpoints whether {@code POST /admin/debug/*} (fault injection) is served
 */
public record IngressSettings(
    String host,
    int port,
    long maxBodyBytes,
    Duration bodyReadTimeout,
    ProxySettings proxy,
    String adminToken,
    String defaultModel,
    boolean debugEndpoints) {

  /** Reads {@code kvrouter.ingress} from {@code config}. */
  public static IngressSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.ingress");
    return new IngressSettings(
        c.getString("http.host"),
        c.getInt("http.port"),
        c.getBytes("max-body-bytes"),
        c.getDuration("body-read-timeout"),
        new ProxySettings(
            c.getInt("retry.max-attempts"),
            c.getDuration("first-byte-timeout"),
            c.getDuration("request-timeout"),
            c.getInt("queue.capacity"),
            c.getDuration("queue.max-wait"),
            c.getDuration("queue.recheck"),
            c.getBoolean("route-headers"),
            c.getInt("migration.limit"),
            c.getDuration("migration.stall-timeout")),
        c.getString("admin-token"),
        c.getString("default-model"),
        c.getBoolean("debug-endpoints"));
  }

  /** The same settings on another port. */
  public IngressSettings withPort(int newPort) {
    return new IngressSettings(
        host,
        newPort,
        maxBodyBytes,
        bodyReadTimeout,
        proxy,
        adminToken,
        defaultModel,
        debugEndpoints);
  }
}
