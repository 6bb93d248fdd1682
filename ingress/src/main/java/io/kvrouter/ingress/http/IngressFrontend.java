package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.proxy.ProxyService;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.stream.Materializer;

/**
 * Assembles the ingress's HTTP front from its parts (settings, tokenizers, router, metrics, admin
 * view) and binds it. The ingress guardian and the tests build it the same way.
 */
public final class IngressFrontend {

  private IngressFrontend() {}

  /** Builds the routes and binds them. */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system,
      IngressSettings settings,
      TokenizerRegistry tokenizers,
      Router router,
      IngressMetrics metrics,
      AdminView admin) {
    ObjectMapper mapper = new ObjectMapper();
    ProxyService proxy = new ProxyService(system, router, mapper, settings.proxy(), metrics);
    InferenceHandler handler =
        new InferenceHandler(
            settings,
            mapper,
            tokenizers,
            router,
            proxy,
            metrics,
            Materializer.matFromSystem(system),
            PromptEncoder.fromConfig(
                system.settings().config(),
                system
                    .dispatchers()
                    .lookup(DispatcherSelector.fromConfig(PromptEncoder.DISPATCHER)),
                tokenizers));
    IngressRoutes routes =
        new IngressRoutes(settings, handler, router, tokenizers, metrics, admin, mapper);
    return IngressHttpServer.start(system, routes.routes(), settings);
  }
}
