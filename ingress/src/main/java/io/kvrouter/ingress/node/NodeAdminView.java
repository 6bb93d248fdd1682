package io.kvrouter.ingress.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.consistency.ConsistencyGatherer;
import io.kvrouter.ingress.http.AdminView;
import io.kvrouter.ingress.routing.ReplicaDirectory;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.tracker.ReplicaLoadSnapshot;
import io.kvrouter.tracker.TrackerDigests;
import io.kvrouter.tracker.actor.KvTracker;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
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

  NodeAdminView(
      ActorSystem<?> system,
      Duration askTimeout,
      ActorRef<KvTracker.Command> tracker,
      ActorRef<TrackerFeeds.Command> feeds,
      ReplicaDirectory directory,
      ConsistencyGatherer consistency,
      ActorRef<IngressReadiness.Command> readiness) {
    this.system = system;
    this.askTimeout = askTimeout;
    this.tracker = tracker;
    this.feeds = feeds;
    this.directory = directory;
    this.consistency = consistency;
    this.readiness = readiness;
  }

  @Override
  public CompletionStage<JsonNode> replicas() {
    CompletionStage<KvTracker.Loads> loadsAsked =
        AskPattern.ask(tracker, KvTracker.GetLoads::new, askTimeout, system.scheduler());
    return AskPattern.<KvTracker.Command, TrackerDigests>ask(
            tracker, KvTracker.GetDigests::new, askTimeout, system.scheduler())
        .thenCombine(
            loadsAsked,
            (digests, loads) -> {
              ArrayNode list = JsonNodeFactory.instance.arrayNode();
              for (ReplicaInfo info : directory.all()) {
                ObjectNode r = list.addObject();
                r.put("replica", info.targetId());
                r.put("model", info.model());
                r.put("url", info.baseUrl());
                r.put("block_size", info.blockSize());
                r.put("kv_events", info.kvEvents());
                info.apis().forEach(r.putArray("apis")::add);
                info.adapters().forEach(r.putArray("adapters")::add);
                r.put("role", info.role());
                r.put("dp_rank", info.dpRank());
                r.put("dp_size", info.dpSize());
                TrackerDigests.ReplicaState state = digests.replicas().get(info.targetId());
                if (state != null) {
                  r.put("blocks", state.digest().count());
                  r.put("epoch", state.epoch());
                  r.put("seq", state.seq());
                }
                ReplicaLoadSnapshot load = loads.byReplica().get(info.targetId());
                if (load != null) {
                  r.put("in_flight", load.inFlight());
                  r.put("prefill_tokens", load.prefillTokens());
                  r.put("decode_tokens", load.decodeTokens());
                  r.put("waiting", load.waiting());
                  r.put("running", load.running());
                  r.put("kv_usage", load.kvUsage());
                }
                Double lag = loads.lagMillis().get(info.targetId());
                if (lag != null) {
                  r.put("lag_ms", Math.round(lag * 10) / 10.0);
                }
              }
              return (JsonNode) list;
            });
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
