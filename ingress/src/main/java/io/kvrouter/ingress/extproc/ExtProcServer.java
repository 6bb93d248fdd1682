package io.kvrouter.ingress.extproc;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.routing.Router;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingress's endpoint-picker gRPC server ({@code kvrouter.ingress.extproc}), beside its HTTP API
 * and over the same router: Envoy (a Gateway with an {@code InferencePool} whose {@code
 * endpointPickerRef} names kvrouter) asks it which pod serves each request, tokenizing as the HTTP
 * API does (one {@link RequestTokenizer}, the same chat prefix cache). On shutdown it stops taking
 * new streams in {@code service-unbind} and lets the streams in flight finish, bounded by the
 * drain's grace period.
 */
public final class ExtProcServer {

  private static final Logger LOG = LoggerFactory.getLogger(ExtProcServer.class);

  private ExtProcServer() {}

  /**
   * Starts the server when {@code kvrouter.ingress.extproc.enabled}; returns the bound port, or -1
   * when disabled.
   */
  public static int startIfEnabled(
      ActorSystem<?> system, Router router, RequestTokenizer tokenizer) {
    ExtProcSettings settings = ExtProcSettings.fromConfig(system.settings().config());
    if (!settings.enabled()) {
      return -1;
    }
    PromptDecoder decoder = new PromptDecoder(new ObjectMapper(), tokenizer);
    Server server;
    try {
      server =
          NettyServerBuilder.forAddress(new InetSocketAddress(settings.host(), settings.port()))
              // messages on the event loop, no hand-off each: PickerStream sends the one heavy
              // step (decoding and tokenizing the body) to the tokenizer's pool
              .directExecutor()
              .addService(new EndpointPicker(decoder, router, settings.maxBodyBytes()))
              .build()
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("ext_proc endpoint picker could not bind", e);
    }
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(Adapter.toClassic(system));
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceUnbind(),
        "kvrouter-extproc-stop-accepting",
        () -> {
          server.shutdown();
          return CompletableFuture.completedFuture(Done.getInstance());
        });
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceRequestsDone(),
        "kvrouter-extproc-drain",
        () ->
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    if (!server.awaitTermination(
                        settings.gracePeriod().toMillis(), TimeUnit.MILLISECONDS)) {
                      server.shutdownNow();
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    server.shutdownNow();
                  }
                  return Done.getInstance();
                }));
    LOG.info(
        "kvrouter endpoint picker (ext_proc) listening on {}:{}",
        settings.host(),
        server.getPort());
    return server.getPort();
  }
}
