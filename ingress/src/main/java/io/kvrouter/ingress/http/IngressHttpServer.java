package io.kvrouter.ingress.http;

import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Binds the ingress routes and unbinds them gracefully: on {@link CoordinatedShutdown} the port
 * stops accepting, then in-flight requests get up to the drain deadline to finish.
 */
public final class IngressHttpServer {

  private IngressHttpServer() {}

  /** Binds {@code route} on the settings' host and port. */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system, Route route, IngressSettings settings) {
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
                      () -> binding.terminate(settings.drain()).thenApply(x -> Done.getInstance()));
              return binding;
            });
  }
}
