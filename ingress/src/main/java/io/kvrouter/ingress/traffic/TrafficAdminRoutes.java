package io.kvrouter.ingress.traffic;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The traffic part of {@code /admin} (behind the admin token like the rest):
 *
 * <ul>
 *   <li>{@code GET /admin/tenants}: the configured tenants and their limits (never their keys);
 *   <li>{@code POST /admin/tenants/reload}: re-read the tenants file now (400 with the reason when
 *       it does not parse; the previous tenants stay);
 *   <li>{@code GET /admin/sessions?model=M&session=S}: the replica a session is bound to, as this
 *       ingress sees it (404 when none).
 * </ul>
 */
public final class TrafficAdminRoutes extends AllDirectives {

  private final IngressTraffic traffic;
  private final ObjectMapper mapper;

  public TrafficAdminRoutes(IngressTraffic traffic, ObjectMapper mapper) {
    this.traffic = traffic;
    this.mapper = mapper;
  }

  /** The routes, to be mounted under {@code /admin}. */
  public Route routes() {
    return concat(
        path("tenants", () -> get(this::tenants)),
        path(segment("tenants").slash("reload"), () -> post(this::reload)),
        path(
            "sessions",
            () ->
                get(
                    () ->
                        parameter(
                            "model",
                            model -> parameter("session", session -> session(model, session))))));
  }

  private static org.apache.pekko.http.javadsl.server.PathMatcher0 segment(String s) {
    return org.apache.pekko.http.javadsl.server.PathMatchers.segment(s);
  }

  private Route tenants() {
    ObjectNode root = mapper.createObjectNode();
    root.put("enabled", traffic.gate().tenants().enabled());
    ObjectNode list = root.putObject("tenants");
    traffic
        .gate()
        .tenants()
        .tenants()
        .forEach(
            (id, t) -> {
              ObjectNode o = list.putObject(id);
              o.put("requests_per_minute", t.requestsPerMinute());
              o.put("tokens_per_minute", t.tokensPerMinute());
              o.put("weight", t.weight());
              if (t.priority() != null) {
                o.put("priority", t.priority());
              }
            });
    return json(200, root.toString());
  }

  private Route reload() {
    ObjectNode root = mapper.createObjectNode();
    try {
      root.put("tenants", traffic.gate().tenants().reload());
      return json(200, root.toString());
    } catch (IllegalArgumentException e) {
      root.putObject("error").put("message", e.getMessage()).put("type", "invalid_request_error");
      return json(400, root.toString());
    }
  }

  private Route session(String model, String session) {
    return onSuccess(
        traffic.sessions().lookup(SessionRouter.sessionOf(model, session)),
        binding -> {
          if (binding == null) {
            return json(404, "{\"error\":{\"message\":\"no binding\",\"type\":\"not_found\"}}");
          }
          ObjectNode o = mapper.createObjectNode();
          o.put("model", model);
          o.put("session", session);
          o.put("replica", binding.replica());
          o.put("touched_millis", binding.touchedMillis());
          return json(200, o.toString());
        });
  }

  private Route json(int status, String body) {
    return complete(
        HttpResponse.create()
            .withStatus(status)
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body)));
  }
}
