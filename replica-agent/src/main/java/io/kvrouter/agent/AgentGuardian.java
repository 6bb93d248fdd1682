package io.kvrouter.agent;

import io.kvrouter.config.node.RoleGuardian;
import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.Topics;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;

/**
 * The guardian of the {@code agent} role: spawns the three cluster topics the agent publishes to
 * ({@link Topics#KV_EVENTS}, {@link Topics#REPLICA_LOAD}, {@link Topics#REPLICA_INFO}) and one
 * {@link ReplicaAgent} per replica; on shutdown the replicas are deregistered first ({@link
 * AgentDrain}).
 */
public final class AgentGuardian {

  private AgentGuardian() {}

  /** The guardian behavior. */
  public static Behavior<Void> create(AgentSettings settings) {
    return Behaviors.setup(
        ctx -> {
          ActorRef<Topic.Command<KvEventBatch>> events =
              ctx.spawn(Topics.kvEvents(), "kv-events-topic");
          ActorRef<Topic.Command<ReplicaLoad>> load =
              ctx.spawn(Topics.replicaLoad(), "replica-load-topic");
          ActorRef<Topic.Command<ReplicaInfo>> info =
              ctx.spawn(Topics.replicaInfo(), "replica-info-topic");
          List<ActorRef<AgentRequest>> agents = new ArrayList<>();
          for (ReplicaSpec spec : settings.replicas()) {
            agents.add(
                ctx.spawn(
                    ReplicaAgent.create(spec, settings, events, load, info),
                    "replica-"
                        + java.net.URLEncoder.encode(
                            spec.info().targetId(), java.nio.charset.StandardCharsets.UTF_8)));
          }
          AgentDrain.register(ctx.getSystem(), agents);
          return Behaviors.empty();
        });
  }

  /** The same, as the {@link RoleGuardian} that {@code NodeBootstrap} takes for role "agent". */
  public static RoleGuardian roleGuardian(AgentSettings settings) {
    return () -> create(settings);
  }
}
