package io.kvrouter.ingress.dashboard;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.CacheControl;
import org.apache.pekko.http.javadsl.model.headers.CacheDirectives;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The consistency dashboard: {@code GET /dashboard} (and {@code /dashboard/}) serves the page,
 * {@code GET /dashboard/<file>} its static assets from the classpath folder {@code dashboard/}
 * (bundled in the jar, no network needed), and {@code GET /dashboard/cluster.json} the cluster
 * membership ({@link ClusterView}). The page itself polls {@code /admin/consistency}, {@code
 * /admin/replicas}, {@code /metrics} and {@code cluster.json}.
 *
 * <p>The static files are public (they hold no data); {@code cluster.json} requires the admin
 * bearer token when one is configured, like {@code /admin/*}. A path under {@code /dashboard} that
 * names no file is rejected, so the caller's not-found route answers it.
 *
 * <p>Cost: a static file is streamed from the classpath per request (the page and its scripts are
 * ~30 KB in all); {@code cluster.json} is O(cluster members). Thread-safe, stateless.
 */
public final class DashboardRoutes extends AllDirectives {

  private final String adminToken;
  private final ClusterView cluster;

  /**
   * @param adminToken the admin bearer token; empty for none
   * @param mapper JSON factory
   */
  public DashboardRoutes(String adminToken, ObjectMapper mapper) {
    this.adminToken = adminToken == null ? "" : adminToken;
    this.cluster = new ClusterView(mapper);
  }

  /** The route tree described above. */
  public Route routes() {
    return pathPrefix(
        "dashboard",
        () ->
            get(
                () ->
                    concat(
                        pathEndOrSingleSlash(
                            () ->
                                noCache(
                                    () ->
                                        getFromResource(
                                            "dashboard/index.html", ContentTypes.TEXT_HTML_UTF8))),
                        path(
                            "cluster.json",
                            () ->
                                authorized(
                                    () ->
                                        extractActorSystem(
                                            system ->
                                                noCache(
                                                    () ->
                                                        complete(
                                                            HttpResponse.create()
                                                                .withEntity(
                                                                    HttpEntities.create(
                                                                        ContentTypes
                                                                            .APPLICATION_JSON,
                                                                        cluster
                                                                            .snapshot(system)
                                                                            .toString()))))))),
                        noCache(() -> getFromResourceDirectory("dashboard")))));
  }

  private Route noCache(Supplier<Route> inner) {
    return respondWithHeader(CacheControl.create(CacheDirectives.NO_CACHE), inner);
  }

  private Route authorized(Supplier<Route> inner) {
    if (adminToken.isEmpty()) {
      return inner.get();
    }
    return authenticateOAuth2(
        "kvrouter-admin",
        credentials -> credentials.filter(c -> c.verify(adminToken)).map(c -> "admin"),
        user -> inner.get());
  }
}
