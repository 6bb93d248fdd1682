package io.kvrouter.ingress.http;

import io.kvrouter.config.management.DrainSettings;
import io.kvrouter.ingress.drain.InFlightRequests;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.Materializer;

/**
 * Binds the ingress routes and unbinds them gracefully: on {@link CoordinatedShutdown} (after the
 * node reported not-ready, see {@code NodeManagement}) the port stops accepting, then requests and
 * streams in flight get up to {@code kvrouter.node.drain.grace-period} to finish ({@link
 * InFlightRequests}: Pekko HTTP's own termination would cut streamed entities); each one releases
 * its reservation as it ends. New requests on connections still open get 503. The connections close
 * {@code flush-delay} after the last stream ended, once the HTTP layer has written it out.
 *
 * <p>When the cluster downed the node (coordinated shutdown's reason is Pekko's {@code
 * ClusterDowningReason}: a split brain resolver decision, or a peer's down command), nothing is
 * drained: every request in flight ends at once with a clean error ({@link
 * InFlightRequests#abort}).
 */
public final class IngressHttpServer {

  private IngressHttpServer() {}

  private static boolean downed(CoordinatedShutdown shutdown) {
    return shutdown
        .getShutdownReason()
        .map(r -> r.equals(CoordinatedShutdown.clusterDowningReason()))
        .orElse(false);
  }

  /** Binds {@code route} on the settings' host and port. */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system, Route route, IngressSettings settings) {
    DrainSettings drain = DrainSettings.fromConfig(system.settings().config());
    Duration grace = drain.gracePeriod();
    Executor afterFlush =
        CompletableFuture.delayedExecutor(drain.flushDelay().toMillis(), TimeUnit.MILLISECONDS);
    InFlightRequests inFlight = new InFlightRequests(Materializer.matFromSystem(system));
    return Http.get(system)
        .newServerAt(settings.host(), settings.port())
        .withSettings(
            ServerSettings.create(Adapter.toClassic(system))
                .withParsingErrorHandler(OpenAiParsingErrors.class.getName()))
        .bind(inFlight.wrap(route.handler(system)))
        .thenApply(
            binding -> {
              CoordinatedShutdown shutdown = CoordinatedShutdown.get(Adapter.toClassic(system));
              shutdown.addTask(
                  CoordinatedShutdown.PhaseBeforeServiceUnbind(),
                  "kvrouter-http-abort-when-downed",
                  () -> {
                    if (downed(shutdown)) {
                      system.log().warn("the cluster downed this node: ending requests in flight");
                      inFlight.abort();
                    }
                    return CompletableFuture.completedFuture(Done.getInstance());
                  });
              shutdown.addTask(
                  CoordinatedShutdown.PhaseServiceUnbind(),
                  "kvrouter-http-unbind",
                  () -> {
                    inFlight.close();
                    return binding.unbind().thenApply(x -> Done.getInstance());
                  });
              shutdown.addTask(
                  CoordinatedShutdown.PhaseServiceRequestsDone(),
                  "kvrouter-http-drain",
                  () ->
                      inFlight
                          .drained(grace)
                          .thenComposeAsync(
                              d -> binding.terminate(Duration.ofSeconds(1)), afterFlush)
                          .thenApply(x -> Done.getInstance()));
              return binding;
            });
  }
}
