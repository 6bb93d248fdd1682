package io.kvrouter.ingress.http;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.ingress.tracing.Tracing;
import io.kvrouter.ingress.traffic.IngressTraffic;
import io.kvrouter.ingress.traffic.TrafficMetrics;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * An ingress front on an ephemeral loopback port with traffic management on its own (no cluster: no
 * tenants, limits or session bindings), a router queue of 4 places rechecked every 20 ms, and
 * {@code tracing}.
 */
final class TrafficFront {

  private TrafficFront() {}

  static ServerBinding start(
      ActorTestKit kit,
      TokenizerRegistry tokenizers,
      Router router,
      IngressMetrics metrics,
      Tracing tracing)
      throws Exception {
    return start(kit, tokenizers, router, metrics, tracing, "");
  }

  /** The same, with {@code settings} (HOCON) added to {@code kvrouter.ingress}. */
  static ServerBinding start(
      ActorTestKit kit,
      TokenizerRegistry tokenizers,
      Router router,
      IngressMetrics metrics,
      Tracing tracing,
      String settings)
      throws Exception {
    Config config =
        ConfigFactory.parseString(
                "kvrouter.ingress { http.host = 127.0.0.1, first-byte-timeout = 5s,"
                    + " queue { capacity = 4, max-wait = 5s, recheck = 20ms } }")
            .withFallback(ConfigFactory.load());
    config =
        ConfigFactory.parseString("kvrouter.ingress { " + settings + " }").withFallback(config);
    IngressTraffic traffic =
        IngressTraffic.standalone(config, new TrafficMetrics(metrics.registry()))
            .withTracing(tracing);
    return IngressFrontend.start(
            kit.system(),
            IngressSettings.fromConfig(config).withPort(0),
            tokenizers,
            router,
            metrics,
            new StaticAdminView(),
            traffic,
            IngressFrontend.promptEncoder(kit.system(), tokenizers))
        .toCompletableFuture()
        .get();
  }
}
