package io.kvrouter.ingress.traffic;

import com.typesafe.config.Config;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.ingress.tracing.Tracing;
import io.kvrouter.ingress.tracing.TracingSettings;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorSettings;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Starts an ingress node's traffic management: a Distributed Data replicator that replicates among
 * ingress nodes only (agents run none; the default replicator of the {@code DistributedData}
 * extension would count them in every write), the {@link SessionDirectory} over it, the sharded
 * owners of the tenants' limits ({@link TenantLimiter}, hosted by ingresses, counting in it), the
 * {@link QueueHeads} gossip between the router queues, the tenants file's reload timer, and tracing
 * as configured. Every ingress spawns them under the same names, so their replicators find each
 * other.
 */
public final class TrafficPlane {

  private TrafficPlane() {}

  /**
   * Spawns the actors as children of {@code ctx} (the ingress guardian).
   *
   * @param instanceId this ingress's id, for tracing
   */
  public static IngressTraffic spawn(
      ActorContext<?> ctx, Config config, TrafficMetrics metrics, String instanceId) {
    TrafficSettings settings = TrafficSettings.fromConfig(config);
    ActorRef<Replicator.Command> replicator =
        ctx.spawn(
            Replicator.behavior(
                ReplicatorSettings.create(ctx.getSystem()).withRole(NodeSettings.ROLE_INGRESS)),
            "traffic-replicator");
    SelfUniqueAddress self =
        new SelfUniqueAddress(Cluster.get(ctx.getSystem()).selfMember().uniqueAddress());
    ActorRef<SessionDirectory.Command> sessions =
        ctx.spawn(
            SessionDirectory.create(
                replicator, self, settings.sessions(), System::currentTimeMillis),
            "sessions");
    ClusterSharding sharding = ClusterSharding.get(ctx.getSystem());
    sharding.init(
        Entity.of(
                TenantLimiter.TYPE_KEY,
                entity ->
                    TenantLimiter.create(
                        entity.getEntityId(),
                        replicator,
                        self,
                        settings.limits(),
                        System::currentTimeMillis,
                        metrics))
            .withRole(NodeSettings.ROLE_INGRESS));
    TenantRegistry tenants = TenantRegistry.fromSettings(settings.tenants());
    if (settings.tenants().path() != null) {
      ctx.getSystem()
          .scheduler()
          .scheduleWithFixedDelay(
              settings.tenants().reloadInterval(),
              settings.tenants().reloadInterval(),
              tenants::reloadIfChanged,
              ctx.getSystem().dispatchers().lookup(DispatcherSelector.blocking()));
    }
    Tracing tracing = Tracing.fromSettings(TracingSettings.fromConfig(config), instanceId);
    ctx.getSystem().getWhenTerminated().thenRun(tracing::close);
    SessionStore store =
        SessionDirectory.asStore(
            sessions, ctx.getSystem().scheduler(), settings.sessions().lookupTimeout());
    PeerQueues peers = new PeerQueues(settings.peerHeadsTtl().toNanos());
    ActorRef<QueueHeads.Command> heads =
        ctx.spawn(
            QueueHeads.create(
                instanceId, peers, settings.peerHeadsRefresh(), settings.peerHeadsCoalesce()),
            "queue-heads");
    return new IngressTraffic(
        settings,
        new TrafficGate(
            settings,
            tenants,
            TenantLimiter.asLimiter(sharding, settings.limits().askTimeout()),
            metrics),
        tracing,
        metrics,
        store,
        peers,
        state -> heads.tell(new QueueHeads.LocalHead(state)));
  }
}
