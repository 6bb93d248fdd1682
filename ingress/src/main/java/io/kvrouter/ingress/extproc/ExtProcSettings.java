package io.kvrouter.ingress.extproc;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * The endpoint picker's settings ({@code kvrouter.ingress.extproc}), read once at start-up.
 *
 * @param enabled whether the ingress serves Envoy's ext_proc gRPC protocol
 * @param host interface the gRPC server binds
 * @param port gRPC port (GIE's default for an endpoint picker is 9002)
 * @param maxBodyBytes request bodies above this are answered 413 without a pick
 * @param gracePeriod how long streams in flight may go on once the node drains
 */
public record ExtProcSettings(
    boolean enabled, String host, int port, long maxBodyBytes, Duration gracePeriod) {

  /** Reads {@code kvrouter.ingress.extproc} and the drain's grace period from {@code config}. */
  public static ExtProcSettings fromConfig(Config config) {
    Config c = config.getConfig("kvrouter.ingress.extproc");
    return new ExtProcSettings(
        c.getBoolean("enabled"),
        c.getString("host"),
        c.getInt("port"),
        config.getBytes("kvrouter.ingress.max-body-bytes"),
        config.getDuration("kvrouter.node.drain.grace-period"));
  }
}
