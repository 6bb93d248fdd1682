package io.kvrouter.systemtest.dashboard;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.dashboard.DashboardRoutes;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.testing.LoopbackHttp;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * A stand-in ingress for the page alone: the real {@link DashboardRoutes} and {@link
 * IngressMetrics}, plus {@code /admin/consistency}, {@code /admin/replicas}, {@code
 * /dashboard/cluster.json} and the {@code /admin/debug/*} controls answered from a small model that
 * follows the issue-6 contract: two trackers over four replicas whose sequence numbers advance on
 * every read; pausing freezes tracker B (lagging); diverging a replica changes B's digest of it at
 * equal watermarks (diverged).
 */
final class MockConsistencyIngress extends AllDirectives implements AutoCloseable {

  static final String TRACKER_A = "pekko://kvrouter@127.0.0.1:25501";
  static final String TRACKER_B = "pekko://kvrouter@127.0.0.1:25502";
  static final List<String> REPLICAS = List.of("sim-0", "sim-1", "sim-2", "sim-3");

  private final IngressMetrics metrics = new IngressMetrics();
  private final AtomicLong seq = new AtomicLong(100);
  private volatile long pausedAt = -1;
  private volatile String diverged;
  private final ServerBinding binding;

  MockConsistencyIngress(ActorSystem<?> system) throws Exception {
    binding =
        org.apache.pekko.http.javadsl.Http.get(system)
            .newServerAt("127.0.0.1", 0)
            .bind(routes())
            .toCompletableFuture()
            .get();
  }

  String url() {
    return "http://127.0.0.1:" + binding.localAddress().getPort();
  }

  private Route routes() {
    return concat(
        path(segment("admin").slash("consistency"), () -> get(() -> json(consistency()))),
        path(segment("admin").slash("replicas"), () -> get(() -> json(replicas()))),
        path(segment("dashboard").slash("cluster.json"), () -> get(() -> json(cluster()))),
        path(
            segment("admin").slash("debug").slash("pause-events"),
            () ->
                post(
                    () -> {
                      pausedAt = seq.get();
                      return json(LoopbackHttp.JSON.createObjectNode().put("paused", true));
                    })),
        path(
            segment("admin").slash("debug").slash("resume-events"),
            () ->
                post(
                    () -> {
                      pausedAt = -1;
                      return json(LoopbackHttp.JSON.createObjectNode().put("paused", false));
                    })),
        path(
            segment("admin").slash("debug").slash("diverge"),
            () ->
                post(
                    () ->
                        parameter(
                            "replica",
                            r -> {
                              diverged = r;
                              return json(LoopbackHttp.JSON.createObjectNode().put("diverged", r));
                            }))),
        path(
            "metrics",
            () ->
                get(
                    () -> {
                      metrics.decision(200_000, 0);
                      metrics.answered("m", "sim-" + (seq.get() % 4), 1000, 512, 512);
                      return complete(
                          HttpResponse.create()
                              .withEntity(
                                  HttpEntities.create(
                                      ContentTypes.TEXT_PLAIN_UTF8, metrics.scrape())));
                    })),
        new DashboardRoutes("", LoopbackHttp.JSON).routes());
  }

  private ObjectNode consistency() {
    long now = seq.addAndGet(3);
    long b = pausedAt >= 0 ? pausedAt : now;
    boolean lagging = b < now;
    boolean isDiverged = diverged != null && !lagging;
    ObjectNode root = LoopbackHttp.JSON.createObjectNode();
    root.put("converged", !lagging && !isDiverged)
        .put("lagging", lagging)
        .put("diverged", isDiverged);
    root.put("generated_at_ms", System.currentTimeMillis());
    ArrayNode trackers = root.putArray("trackers");
    for (String t : List.of(TRACKER_A, TRACKER_B)) {
      long own = t.equals(TRACKER_A) ? now : b;
      ObjectNode tracker = trackers.addObject().put("ingress", t).put("reachable", true);
      ObjectNode reps = tracker.putObject("replicas");
      for (String r : REPLICAS) {
        boolean corrupt = r.equals(diverged) && !lagging;
        String state = corrupt ? "diverged" : own < now ? "lagging" : "converged";
        String digest =
            corrupt && t.equals(TRACKER_B)
                ? "deadbeefdeadbeef"
                : String.format("%016x", now * 31 + r.hashCode());
        reps.putObject(r)
            .put("epoch", 1)
            .put("seq", own)
            .put("blocks", 10 + own % 7)
            .put("digest", digest)
            .put("state", state)
            .put("lag_seq", now - own);
      }
      ObjectNode origins = tracker.putObject("origins");
      for (String o : List.of(TRACKER_A, TRACKER_B)) {
        origins
            .putObject(o)
            .put("seq", own)
            .put("count", 3)
            .put("digest", "00ff00ff00ff00ff")
            .put("state", own < now ? "lagging" : "converged")
            .put("lag_seq", now - own);
      }
    }
    ArrayNode replicas = root.putArray("replicas");
    REPLICAS.forEach(replicas::add);
    root.putArray("origins").add(TRACKER_A).add(TRACKER_B);
    return root;
  }

  private ArrayNode replicas() {
    ArrayNode list = LoopbackHttp.JSON.createArrayNode();
    for (String r : REPLICAS) {
      list.addObject()
          .put("replica", r)
          .put("model", "m")
          .put("url", "http://127.0.0.1:1")
          .put("block_size", 16)
          .put("kv_events", true)
          .put("blocks", 12)
          .put("epoch", 1)
          .put("seq", seq.get())
          .put("in_flight", seq.get() % 5)
          .put("prefill_tokens", 100)
          .put("decode_tokens", 40)
          .put("waiting", 0)
          .put("running", 1)
          .put("kv_usage", 0.25);
    }
    return list;
  }

  private ObjectNode cluster() {
    ObjectNode root =
        LoopbackHttp.JSON.createObjectNode().put("cluster", true).put("self", TRACKER_B);
    ArrayNode members = root.putArray("members");
    members
        .addObject()
        .put("address", TRACKER_A)
        .put("status", "Up")
        .put("reachable", true)
        .put("self", false)
        .putArray("roles")
        .add("ingress");
    members
        .addObject()
        .put("address", TRACKER_B)
        .put("status", "Up")
        .put("reachable", true)
        .put("self", true)
        .putArray("roles")
        .add("ingress");
    return root;
  }

  private Route json(Object node) {
    return complete(
        HttpResponse.create()
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, node.toString())));
  }

  @Override
  public void close() throws Exception {
    binding.unbind().toCompletableFuture().get();
  }
}
