package io.kvrouter.ingress.consistency;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.protocol.GetTrackerReport;
import io.kvrouter.protocol.TrackerReport;
import io.kvrouter.protocol.TrackerRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * Asks every tracker in the cluster for its view (in parallel, each with a timeout; one that does
 * not answer counts as unreachable) and builds the {@link ConsistencyReport}. Used by the HTTP edge
 * for {@code GET /admin/consistency}; {@code peers} gives the tracker endpoints listed now (the
 * node's peer sync owns that list).
 */
public final class ConsistencyGatherer {

  private final Supplier<CompletionStage<Map<String, ActorRef<TrackerRequest>>>> peers;
  private final Scheduler scheduler;
  private final Duration timeout;
  private final IngressMetrics metrics;

  public ConsistencyGatherer(
      Supplier<CompletionStage<Map<String, ActorRef<TrackerRequest>>>> peers,
      Scheduler scheduler,
      Duration timeout,
      IngressMetrics metrics) {
    this.peers = peers;
    this.scheduler = scheduler;
    this.timeout = timeout;
    this.metrics = metrics;
  }

  /** The cluster-wide view as JSON. */
  public CompletionStage<JsonNode> gather() {
    return peers.get().thenCompose(this::gather);
  }

  private CompletionStage<JsonNode> gather(Map<String, ActorRef<TrackerRequest>> endpoints) {
    List<CompletableFuture<ConsistencyReport.Answer>> asks = new ArrayList<>();
    for (Map.Entry<String, ActorRef<TrackerRequest>> peer : endpoints.entrySet()) {
      asks.add(
          AskPattern.<TrackerRequest, TrackerReport>ask(
                  peer.getValue(), GetTrackerReport::new, timeout, scheduler)
              .toCompletableFuture()
              .handle(
                  (view, error) ->
                      new ConsistencyReport.Answer(peer.getKey(), error == null ? view : null)));
    }
    return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new))
        .thenApply(
            done -> {
              List<ConsistencyReport.Answer> answers =
                  asks.stream().map(CompletableFuture::join).toList();
              ConsistencyReport report = ConsistencyReport.of(answers);
              JsonNode json = report.toJson(System.currentTimeMillis());
              if (report.divergedCells() > 0) {
                metrics.tracker().digestMismatches(report.divergedCells());
              }
              json.path("per_replica")
                  .fields()
                  .forEachRemaining(
                      e -> {
                        JsonNode accurate = e.getValue().path("accurate");
                        metrics
                            .tracker()
                            .replicaConsistency(
                                e.getKey(),
                                e.getValue().path("converged").asBoolean(),
                                accurate.isBoolean() ? accurate.asBoolean() : null);
                      });
              return json;
            });
  }
}
