package io.kvrouter.ingress.program;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.http.javadsl.ConnectHttp;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Prefills a program's next prompt prefix on the program's replica while its client runs a tool: a
 * {@code /v1/completions} request of the prefix's token ids (its text where the engine takes no
 * ids) with {@code max_tokens} 1, so the engine computes and caches the prefix and the next turn
 * finds it. This is the speculative prefill of ThunderAgent and Dynamo's agent hints, done by the
 * router that knows the rendered history.
 *
 * <p>A warm is routed like a request pinned to that replica, so it holds a reservation the tracker
 * counts and the replica's busy threshold applies: where the replica has no headroom the router
 * answers busy and the warm is skipped (it never queues). It goes only to a replica the tracker
 * finds idle: one holding at most {@code maxOthersInFlight} reserved requests besides the warm (0
 * by default: none), and only where the tracker expects at most {@code maxUncachedTokens} of its
 * prefix uncached there, so that its prefill is one short chunk; else it is skipped and its
 * reservation given back. A warm is an ordinary request to the engine, and vLLM v1 schedules its
 * running requests first each pass, a chunked prefill taking up to the whole token budget ({@code
 * Scheduler.schedule}, {@code vllm/v1/core/sched/scheduler.py}, commit 00024d31): a warm sent
 * beside running requests adds its prefill to their decode passes and slows them, and one sent to
 * an idle replica delays only a request that arrives while its own prefill runs, by at most the
 * pass of its uncached tokens. It goes on its own connection, closed when the program's next turn
 * arrives before it finished (vLLM aborts a request whose connection closes) or when it takes
 * longer than its timeout. At most one warm per program is in flight; a newer one cancels the
 * older. Thread-safe.
 */
final class TurnWarmer {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TurnWarmer.class);

  private final Router router;
  private final Http http;
  private final Materializer materializer;
  private final ObjectMapper mapper;
  private final ProgramMetrics metrics;
  private final ProgramLedger ledger;
  private final Duration timeout;
  private final int maxOthersInFlight;
  private final int maxUncachedTokens;

  /** The warm in flight per program. */
  private final ConcurrentHashMap<String, Warm> inFlight = new ConcurrentHashMap<>();

  /** One warm: cancelled once, its reservation released once. */
  private final class Warm {
    final String program;
    final AtomicBoolean cancelled = new AtomicBoolean();
    final AtomicBoolean ended = new AtomicBoolean();
    volatile SharedKillSwitch connection;
    volatile String reservationId;

    Warm(String program) {
      this.program = program;
    }

    void cancel() {
      if (cancelled.compareAndSet(false, true)) {
        SharedKillSwitch c = connection;
        if (c != null) {
          c.abort(new IllegalStateException("the program's next turn arrived"));
        }
      }
    }

    /** The warm is over with {@code outcome}: its reservation is released, once. */
    void end(String outcome) {
      if (ended.compareAndSet(false, true)) {
        inFlight.remove(program, this);
        String id = reservationId;
        if (id != null) {
          router.released(id);
        }
        metrics.warm(outcome);
        if (outcome.equals("warmed")) {
          ledger.warmed(program);
        }
      }
    }
  }

  TurnWarmer(
      Router router,
      Http http,
      Materializer materializer,
      ObjectMapper mapper,
      ProgramMetrics metrics,
      ProgramLedger ledger,
      Duration timeout,
      int maxOthersInFlight,
      int maxUncachedTokens) {
    this.router = router;
    this.http = http;
    this.materializer = materializer;
    this.mapper = mapper;
    this.metrics = metrics;
    this.ledger = ledger;
    this.timeout = timeout;
    this.maxOthersInFlight = maxOthersInFlight;
    this.maxUncachedTokens = maxUncachedTokens;
  }

  /** A turn of {@code program} arrived: a warm of it still in flight is cancelled. */
  void arrived(String program) {
    Warm w = inFlight.remove(program);
    if (w != null) {
      w.cancel();
    }
  }

  /** Warms {@code prefix} of {@code program}'s next turn on {@code replica}. */
  void warm(String program, String model, String replica, NextTurn.Prefix prefix) {
    Warm warm = new Warm(program);
    Warm older = inFlight.put(program, warm);
    if (older != null) {
      older.cancel();
    }
    ReplicaQuery query =
        new ReplicaQuery(
            "warm-" + UUID.randomUUID(),
            model,
            prefix.tokens(),
            1,
            Set.of(),
            program,
            replica,
            null);
    router
        .selectAndReserve(query)
        .whenComplete(
            (outcome, error) -> {
              if (error != null) {
                warm.end("failed");
              } else if (outcome instanceof RouteOutcome.Routed routed) {
                warm.reservationId = routed.reservationId();
                if (!routed.target().replicaId().equals(replica)) {
                  warm.end("skipped_moved");
                } else if (!idle(routed)) {
                  warm.end("skipped_not_idle");
                } else if (prefix.tokens().length - routed.predictedCachedTokens()
                    > maxUncachedTokens) {
                  warm.end("skipped_too_long");
                } else if (warm.cancelled.get()) {
                  warm.end("cancelled");
                } else {
                  send(warm, model, routed.target(), prefix);
                }
              } else if (outcome instanceof RouteOutcome.Busy
                  || outcome instanceof RouteOutcome.SloMiss) {
                warm.end("skipped_no_headroom");
              } else {
                warm.end("skipped_moved");
              }
            });
  }

  /**
   * Whether the warm's replica is idle enough for it: the tracker counted at most {@code
   * maxOthersInFlight} other requests reserved there (a router that does not count them is not
   * trusted).
   */
  private boolean idle(RouteOutcome.Routed routed) {
    return routed.othersInFlight() != RouteOutcome.Routed.UNKNOWN
        && routed.othersInFlight() <= maxOthersInFlight;
  }

  private void send(Warm warm, String model, Target target, NextTurn.Prefix prefix) {
    ObjectNode body = mapper.createObjectNode().put("model", model);
    if (target.acceptsTokenIds()) {
      ArrayNode ids = body.putArray("prompt");
      for (int t : prefix.tokens()) {
        ids.add(t);
      }
    } else {
      body.put("prompt", prefix.text());
    }
    body.put("max_tokens", 1).put("stream", false);
    Uri base = Uri.create(target.baseUrl());
    HttpRequest request =
        target.addressed(
            HttpRequest.create()
                .withMethod(HttpMethods.POST)
                .withUri(base.path() + "/v1/completions")
                .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body.toString())));
    // The switch sits on both sides of the connection, and the request side stays open until it
    // is pulled: aborting it fails the connection's input, which closes the TCP connection at once
    // (a cancelled response side alone may leave it half open until the engine answers).
    SharedKillSwitch kill = KillSwitches.shared("warm");
    CompletionStage<HttpResponse> reply;
    try {
      reply =
          Source.single(request)
              .concat(Source.never())
              .via(kill.flow())
              .via(http.outgoingConnection(ConnectHttp.toHost(target.baseUrl())))
              .via(kill.flow())
              .runWith(Sink.head(), materializer);
    } catch (RuntimeException e) {
      LOG.debug("warm of {} not sent", warm.program, e);
      warm.end("failed");
      return;
    }
    warm.connection = kill;
    if (warm.cancelled.get()) {
      kill.abort(new IllegalStateException("the program's next turn arrived"));
    }
    CompletableFuture<HttpResponse> answered =
        reply.toCompletableFuture().orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
    answered.whenComplete(
        (response, error) -> {
          if (error != null) {
            kill.abort(error);
            warm.end(warm.cancelled.get() ? "cancelled" : "failed");
            return;
          }
          response
              .discardEntityBytes(materializer)
              .completionStage()
              .whenComplete(
                  (done, e) -> {
                    kill.shutdown();
                    warm.end(response.status().isSuccess() ? "warmed" : "failed");
                  });
        });
  }
}
