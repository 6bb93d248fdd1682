package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.program.ProgramFront;
import io.kvrouter.ingress.program.ProgramSettings;
import io.kvrouter.ingress.proxy.ProxyService;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.ingress.traffic.IngressTraffic;
import io.kvrouter.ingress.traffic.TrafficAdminRoutes;
import io.kvrouter.ingress.traffic.TrafficMetrics;
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

  /**
   * Builds the routes and binds them, with traffic management as a front without a cluster has it
   * ({@link IngressTraffic#standalone}).
   */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system,
      IngressSettings settings,
      TokenizerRegistry tokenizers,
      Router router,
      IngressMetrics metrics,
      AdminView admin) {
    return start(
        system,
        settings,
        tokenizers,
        router,
        metrics,
        admin,
        IngressTraffic.standalone(
            system.settings().config(), new TrafficMetrics(metrics.registry())),
        promptEncoder(system, tokenizers));
  }

  /**
   * The prompt encoder {@code kvrouter.ingress.tokenize} configures, on its own dispatcher; the
   * HTTP API and the endpoint picker share one, so they share its chat prefix cache.
   */
  public static PromptEncoder promptEncoder(ActorSystem<?> system, TokenizerRegistry tokenizers) {
    return PromptEncoder.fromConfig(
        system.settings().config(),
        system.dispatchers().lookup(DispatcherSelector.fromConfig(PromptEncoder.DISPATCHER)),
        tokenizers);
  }

  /** Builds the routes and binds them, tokenizing through {@code encoder}. */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system,
      IngressSettings settings,
      TokenizerRegistry tokenizers,
      Router router,
      IngressMetrics metrics,
      AdminView admin,
      IngressTraffic traffic,
      PromptEncoder encoder) {
    ObjectMapper mapper = new ObjectMapper();
    RequestTokenizer requestTokenizer =
        new RequestTokenizer(tokenizers, router, settings.defaultModel(), encoder);
    ProxyService proxy =
        new ProxyService(
            system,
            router,
            mapper,
            settings.proxy(),
            metrics,
            traffic.settings(),
            traffic.metrics(),
            traffic.peers(),
            traffic.heads(),
            (model, text) -> requestTokenizer.tokenizerOf(model).tokenizer().encode(text, false));
    InferenceHandler handler =
        new InferenceHandler(
            settings,
            mapper,
            proxy,
            metrics,
            Materializer.matFromSystem(system),
            requestTokenizer,
            traffic,
            new ProgramFront(
                ProgramSettings.fromConfig(system.settings().config()),
                system,
                proxy.router(),
                requestTokenizer,
                traffic.sessions(),
                mapper,
                metrics.registry()));
    IngressRoutes routes =
        new IngressRoutes(
            settings,
            handler,
            router,
            tokenizers,
            metrics,
            admin,
            mapper,
            new TrafficAdminRoutes(traffic, mapper));
    return IngressHttpServer.start(system, routes.routes(), settings);
  }
}
