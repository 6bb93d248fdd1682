package io.kvrouter.ingress.http;

import io.kvrouter.config.management.DrainSettings;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Binds the ingress routes and unbinds them gracefully: on {@link CoordinatedShutdown} (after the
 * node reported not-ready, see {@code NodeManagement}) the port stops accepting, then requests and
 * streams in flight get up to {@code kvrouter.node.drain.grace-period} to finish; each one releases
 * its reservation as it ends.
 */
public final class IngressHttpServer {

  private IngressHttpServer() {}

  /** Binds {@code route} on the settings' host and port. */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system, Route route, IngressSettings settings) {
    Duration grace = DrainSettings.fromConfig(system.settings().config()).gracePeriod();
    return Http.get(system)
        .newServerAt(settings.host(), settings.port())
        .bind(route)
        .thenApply(
            binding -> {
              CoordinatedShutdown.get(Adapter.toClassic(system))
                  .addTask(
                      CoordinatedShutdown.PhaseServiceUnbind(),
                      "kvrouter-http-unbind",
                      () -> binding.unbind().thenApply(x -> Done.getInstance()));
              CoordinatedShutdown.get(Adapter.toClassic(system))
                  .addTask(
                      CoordinatedShutdown.PhaseServiceRequestsDone(),
                      "kvrouter-http-drain",
                      () -> binding.terminate(grace).thenApply(x -> Done.getInstance()));
              return binding;
            });
  }
}
