package io.kvrouter.ingress.node;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.ingress.consistency.ConsistencyGatherer;
import io.kvrouter.ingress.http.AdminView;
import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.tracker.TrackerDigests;
import io.kvrouter.tracker.actor.KvTracker;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.ToIntFunction;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/** The admin views and debug hooks of an ingress node, over its tracker, feeds and readiness. */
final class NodeAdminView implements AdminView {

  private final ActorSystem<?> system;
  private final Duration askTimeout;
  private final ActorRef<KvTracker.Command> tracker;
  private final ActorRef<TrackerFeeds.Command> feeds;
  private final ReplicaDirectory directory;
  private final ConsistencyGatherer consistency;
  private final ActorRef<IngressReadiness.Command> readiness;
  private final ToIntFunction<String> routerBlockSize;

  NodeAdminView(
      ActorSystem<?> system,
      Duration askTimeout,
      ActorRef<KvTracker.Command> tracker,
      ActorRef<TrackerFeeds.Command> feeds,
      ReplicaDirectory directory,
      ConsistencyGatherer consistency,
      ActorRef<IngressReadiness.Command> readiness,
      ToIntFunction<String> routerBlockSize) {
    this.system = system;
    this.askTimeout = askTimeout;
    this.tracker = tracker;
    this.feeds = feeds;
    this.directory = directory;
    this.consistency = consistency;
    this.readiness = readiness;
    this.routerBlockSize = routerBlockSize;
  }

  @Override
  public CompletionStage<JsonNode> replicas() {
    CompletionStage<KvTracker.Loads> loadsAsked =
        AskPattern.ask(tracker, KvTracker.GetLoads::new, askTimeout, system.scheduler());
    return AskPattern.<KvTracker.Command, TrackerDigests>ask(
            tracker, KvTracker.GetDigests::new, askTimeout, system.scheduler())
        .thenCombine(
            loadsAsked,
            (digests, loads) ->
                ReplicaListing.of(directory.all(), digests, loads, routerBlockSize));
  }

  @Override
  public CompletionStage<Boolean> ready() {
    return AskPattern.<IngressReadiness.Command, IngressReadiness.Status>ask(
            readiness, IngressReadiness.Get::new, askTimeout, system.scheduler())
        .handle((status, error) -> status != null && status.ready());
  }

  @Override
  public CompletionStage<JsonNode> consistency() {
    return consistency.gather();
  }

  @Override
  public void pauseEvents(boolean paused) {
    feeds.tell(new TrackerFeeds.PauseEvents(paused));
  }

  @Override
  public void diverge(String replicaId) {
    tracker.tell(new KvTracker.DebugDiverge(replicaId));
  }
}
