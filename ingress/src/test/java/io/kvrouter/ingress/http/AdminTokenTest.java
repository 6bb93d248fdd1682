package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.Test;

class AdminTokenTest {

  @Test
  void adminEndpoints_requireTheConfiguredBearerToken_andDebugEndpointsAreOffByDefault()
      throws Exception {
    ActorTestKit kit = ActorTestKit.create();
    Config config =
        ConfigFactory.parseString(
                "kvrouter.ingress { http.host = 127.0.0.1, admin-token = s3cret }")
            .withFallback(ConfigFactory.load());
    try (TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(config)) {
      ServerBinding binding =
          IngressFrontend.start(
                  kit.system(),
                  IngressSettings.fromConfig(config).withPort(0),
                  tokenizers,
                  new FakeRouter(),
                  new IngressMetrics(),
                  new StaticAdminView())
              .toCompletableFuture()
              .get();
      String base = "http://127.0.0.1:" + binding.localAddress().getPort();
      HttpClient client = HttpClient.newHttpClient();

      HttpResponse<String> anonymous =
          client.send(
              HttpRequest.newBuilder(URI.create(base + "/admin/replicas")).build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> wrong =
          client.send(
              HttpRequest.newBuilder(URI.create(base + "/admin/replicas"))
                  .header("Authorization", "Bearer nope")
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> right =
          client.send(
              HttpRequest.newBuilder(URI.create(base + "/admin/replicas"))
                  .header("Authorization", "Bearer s3cret")
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> debug =
          client.send(
              HttpRequest.newBuilder(URI.create(base + "/admin/debug/pause-events"))
                  .header("Authorization", "Bearer s3cret")
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(anonymous.statusCode()).isEqualTo(401);
      assertThat(wrong.statusCode()).isEqualTo(401);
      assertThat(right.statusCode()).isEqualTo(200);
      assertThat(right.body()).isEqualTo("[]");
      assertThat(debug.statusCode()).as("debug endpoints are off unless configured").isEqualTo(404);
      binding.unbind().toCompletableFuture().get();
    } finally {
      kit.shutdownTestKit();
    }
  }
}
