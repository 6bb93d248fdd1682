package io.kvrouter.config.management;

import com.typesafe.config.Config;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.management.cluster.bootstrap.ClusterBootstrap;
import org.apache.pekko.management.javadsl.PekkoManagement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every node runs beside its roles: the first step of the drain, and Pekko Management when
 * configured ({@code kvrouter.management}).
 *
 * <ul>
 *   <li><b>Drain, step one</b>: in coordinated shutdown's {@code before-service-unbind} phase the
 *       node turns not-ready ({@link NodeReadiness#startDraining()}) and keeps serving for {@code
 *       kvrouter.node.drain.unready-delay}, so load balancers stop sending it new requests. The
 *       roles add their own later steps (the ingress unbinds and lets streams finish, the agent
 *       deregisters its replicas); then the cluster phases make the node leave.
 *   <li><b>Management</b> ({@code kvrouter.management.enabled}): the management HTTP endpoint with
 *       {@code /alive} and {@code /ready} (the latter through {@link KvrouterReadinessCheck}).
 *   <li><b>Cluster bootstrap</b> ({@code kvrouter.management.bootstrap}): contact points come from
 *       service discovery ({@code kubernetes-api} in the {@code kubernetes} profile, {@code config}
 *       in the tests); the node joins a cluster a contact point is in, or the lowest addressed node
 *       forms a new one. No seed nodes.
 * </ul>
 */
public final class NodeManagement {

  private static final Logger LOG = LoggerFactory.getLogger(NodeManagement.class);

  private NodeManagement() {}

  /** Registers the drain's first step and starts what {@code kvrouter.management} asks for. */
  public static void start(ActorSystem<?> system, Config config) {
    DrainSettings drain = DrainSettings.fromConfig(config);
    NodeReadiness readiness = NodeReadiness.get(system);
    CoordinatedShutdown.get(Adapter.toClassic(system))
        .addTask(
            CoordinatedShutdown.PhaseBeforeServiceUnbind(),
            "kvrouter-report-not-ready",
            () -> {
              readiness.startDraining();
              LOG.info(
                  "draining: reporting not-ready, serving on for {} ms",
                  drain.unreadyDelay().toMillis());
              return delay(drain.unreadyDelay().toMillis());
            });
    if (config.getBoolean("kvrouter.management.enabled")) {
      PekkoManagement.get(Adapter.toClassic(system))
          .start()
          .whenComplete(
              (uri, e) -> {
                if (e != null) {
                  LOG.error("Pekko Management did not start", e);
                } else {
                  LOG.info("Pekko Management at {}", uri);
                }
              });
    }
    if (config.getBoolean("kvrouter.management.bootstrap")) {
      ClusterBootstrap.get(Adapter.toClassic(system)).start();
    }
  }

  /** Whether this node joins through cluster bootstrap rather than seed nodes or self-join. */
  public static boolean bootstraps(Config config) {
    return config.getBoolean("kvrouter.management.bootstrap");
  }

  private static CompletionStage<Done> delay(long millis) {
    if (millis <= 0) {
      return CompletableFuture.completedFuture(Done.getInstance());
    }
    return CompletableFuture.supplyAsync(
        Done::getInstance, CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS));
  }
}
