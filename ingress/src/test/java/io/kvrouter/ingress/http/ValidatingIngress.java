package io.kvrouter.ingress.http;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * The HTTP front of one ingress on loopback for the bad-input tests: model {@code tiny} (cl100k)
 * with the given context length and body limit, a {@link FakeRouter} with one {@link FakeEngine}
 * target serving {@code apis}.
 */
final class ValidatingIngress implements AutoCloseable {

  final ActorTestKit kit;
  final TokenizerRegistry tokenizers;
  final FakeRouter router = new FakeRouter();
  final FakeEngine engine;
  final ServerBinding binding;
  private final HttpClient client = HttpClient.newHttpClient();

  ValidatingIngress(int maxModelLen, String maxBodyBytes, List<String> apis) throws Exception {
    this(maxModelLen, maxBodyBytes, apis, "");
  }

  /** The same, with {@code ingressConfig} added inside {@code kvrouter.ingress}. */
  ValidatingIngress(int maxModelLen, String maxBodyBytes, List<String> apis, String ingressConfig)
      throws Exception {
    Config config =
        ConfigFactory.parseString(
                "kvrouter.models.tiny { tokenizer = \"tiktoken:cl100k_base\", max-model-len = "
                    + maxModelLen
                    + " }\nkvrouter.ingress { http.host = 127.0.0.1, max-body-bytes = "
                    + maxBodyBytes
                    + "\n"
                    + ingressConfig
                    + " }")
            .withFallback(ConfigFactory.load());
    kit = ActorTestKit.create(config);
    tokenizers = TokenizerRegistry.fromConfig(config);
    engine = new FakeEngine(FakeEngine.Mode.OK);
    router.targets.add(new Target("r0", engine.url(), true, apis));
    binding =
        IngressFrontend.start(
                kit.system(),
                IngressSettings.fromConfig(config).withPort(0),
                tokenizers,
                router,
                new IngressMetrics(),
                new StaticAdminView())
            .toCompletableFuture()
            .get();
  }

  int port() {
    return binding.localAddress().getPort();
  }

  HttpResponse<String> post(String path, String body) throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port() + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Override
  public void close() throws Exception {
    binding.unbind().toCompletableFuture().get();
    engine.close();
    kit.shutdownTestKit();
    tokenizers.close();
  }
}
