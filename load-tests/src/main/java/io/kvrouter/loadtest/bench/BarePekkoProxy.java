package io.kvrouter.loadtest.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.Materializer;

/**
 * The floor of the ingress's HTTP layer: a reverse proxy in Pekko HTTP that does nothing but relay,
 * with the ingress's own Pekko HTTP settings ({@code kvrouter/node.conf}: the client pool's sizes,
 * {@code TCP_NODELAY}) and none of its work (no JSON, no tokenizing, no tracker, no cluster, no
 * metrics). Each request is re-sent to the upstream through the host connection pool as a fresh
 * request with the same method, path, query and entity (streamed both ways, as the ingress relays a
 * stream), and the upstream's response is returned as it came.
 *
 * <p>{@code load-tests/bench/overhead.sh} runs the same bench through it beside nginx and the
 * ingress: what the ingress costs above this proxy is its own work; what this proxy costs above
 * nginx is Pekko HTTP's.
 *
 * <p>Usage: {@code java -cp kvrouter-all.jar io.kvrouter.loadtest.bench.BarePekkoProxy --port P
 * --upstream http://127.0.0.1:E [--host 127.0.0.1] [--client pekko|netty]}: {@code netty} sends the
 * upstream requests through a {@link NettyUpstreamClient} instead.
 */
public final class BarePekkoProxy implements AutoCloseable {

  private final ActorSystem system;

  private BarePekkoProxy(ActorSystem system) {
    this.system = system;
  }

  public static void main(String[] args) {
    Map<String, String> a =
        OptionPairs.parse(
            args,
            "BarePekkoProxy --port P --upstream http://127.0.0.1:E [--host 127.0.0.1]"
                + " [--client pekko|netty]",
            "--port",
            "--upstream");
    String host = a.getOrDefault("--host", "127.0.0.1");
    int port = Integer.parseInt(a.get("--port"));
    String upstream = a.get("--upstream");
    String client = a.getOrDefault("--client", "pekko");
    if (!client.equals("pekko") && !client.equals("netty")) {
      System.err.println("--client must be pekko or netty, was " + client);
      System.exit(2);
    }
    start(host, port, upstream, client.equals("netty"));
    System.out.println("bare Pekko HTTP proxy on " + host + ":" + port + " -> " + upstream);
  }

  /** Binds the proxy on {@code host:port}, relaying to {@code upstream} (a base URL). */
  public static BarePekkoProxy start(String host, int port, String upstream) {
    return start(host, port, upstream, false);
  }

  /**
   * The same; with {@code nettyClient} the upstream requests go through a {@link
   * NettyUpstreamClient} (one event loop) instead of Pekko HTTP's host connection pool.
   */
  public static BarePekkoProxy start(String host, int port, String upstream, boolean nettyClient) {
    String base = upstream.replaceAll("/+$", "");
    Config config =
        ConfigFactory.parseString("pekko.actor.provider = local\npekko.loglevel = WARNING")
            .withFallback(ConfigFactory.parseResources("kvrouter/node.conf"))
            .withFallback(ConfigFactory.load())
            .resolve();
    ActorSystem system = ActorSystem.create("bare-proxy", config);
    Http http = Http.get(system);
    Function<HttpRequest, CompletionStage<HttpResponse>> relay =
        request -> {
          HttpRequest out =
              HttpRequest.create()
                  .withMethod(request.method())
                  .withUri(Uri.create(base + pathAndQuery(request)))
                  .withEntity(request.entity());
          return http.singleRequest(out);
        };
    if (nettyClient) {
      Materializer materializer = Materializer.matFromSystem(system);
      NettyUpstreamClient client = new NettyUpstreamClient(URI.create(base), 1, materializer);
      system.registerOnTermination(client::close);
      relay =
          request -> {
            String type =
                request.entity().getContentType().equals(ContentTypes.NO_CONTENT_TYPE)
                    ? null
                    : request.entity().getContentType().toString();
            return request
                .entity()
                .toStrict(10_000, materializer)
                .thenCompose(
                    strict ->
                        client.send(
                            request.method().value(),
                            pathAndQuery(request),
                            type,
                            strict.getData().toArray()));
          };
    }
    try {
      http.newServerAt(host, port).bind(relay).toCompletableFuture().join();
    } catch (RuntimeException e) {
      system.terminate();
      throw e;
    }
    return new BarePekkoProxy(system);
  }

  private static String pathAndQuery(HttpRequest request) {
    return request.getUri().path() + request.getUri().rawQueryString().map(q -> "?" + q).orElse("");
  }

  @Override
  public void close() {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().join();
  }
}
