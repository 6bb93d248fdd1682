package io.kvrouter.ingress.http;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.metrics.IngressMetrics;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.util.TreeSet;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The ingress's HTTP surface: OpenAI and Anthropic inference endpoints, models, health, readiness,
 * Prometheus metrics and the admin endpoints (bearer token when one is configured). Anything else
 * gets a 404 in OpenAI's error form.
 */
public final class IngressRoutes extends AllDirectives {

  private final IngressSettings settings;
  private final InferenceHandler inference;
  private final Router router;
  private final TokenizerRegistry tokenizers;
  private final IngressMetrics metrics;
  private final AdminView admin;
  private final ObjectMapper mapper;
  private final io.kvrouter.ingress.traffic.TrafficAdminRoutes trafficAdmin;

  public IngressRoutes(
      IngressSettings settings,
      InferenceHandler inference,
      Router router,
      TokenizerRegistry tokenizers,
      IngressMetrics metrics,
      AdminView admin,
      ObjectMapper mapper,
      io.kvrouter.ingress.traffic.TrafficAdminRoutes trafficAdmin) {
    this.trafficAdmin = trafficAdmin;
    this.settings = settings;
    this.inference = inference;
    this.router = router;
    this.tokenizers = tokenizers;
    this.metrics = metrics;
    this.admin = admin;
    this.mapper = mapper;
  }

  /** The route tree. */
  public Route routes() {
    return concat(
        path(segment("v1").slash("completions"), () -> post(() -> inference(Endpoint.COMPLETIONS))),
        path(
            segment("v1").slash("chat").slash("completions"),
            () -> post(() -> inference(Endpoint.CHAT))),
        path(segment("v1").slash("messages"), () -> post(() -> inference(Endpoint.MESSAGES))),
        path(
            segment("v1").slash("messages").slash("count_tokens"),
            () -> post(() -> inference(Endpoint.COUNT_TOKENS))),
        path(segment("v1").slash("responses"), () -> post(() -> inference(Endpoint.RESPONSES))),
        path(segment("v1").slash("models"), () -> get(this::models)),
        path("health", () -> get(() -> json(200, "{\"status\":\"ok\"}"))),
        path("ready", () -> get(this::ready)),
        path(
            "metrics",
            () ->
                get(
                    () ->
                        complete(
                            HttpResponse.create()
                                .withEntity(
                                    HttpEntities.create(
                                        ContentTypes.TEXT_PLAIN_UTF8, metrics.scrape()))))),
        pathPrefix(
            "admin",
            () ->
                authorized(
                    () ->
                        concat(
                            path(
                                "replicas",
                                () ->
                                    get(
                                        () ->
                                            onSuccess(
                                                admin.replicas(),
                                                node -> json(200, node.toString())))),
                            path(
                                "consistency",
                                () ->
                                    get(
                                        () ->
                                            onSuccess(
                                                admin.consistency(),
                                                node -> json(200, node.toString())))),
                            pathPrefix("debug", this::debug),
                            trafficAdmin.routes(),
                            notFound()))),
        new io.kvrouter.ingress.dashboard.DashboardRoutes(settings.adminToken(), mapper).routes(),
        notFound());
  }

  /** Fault injection for tests and demos; 404 unless {@code kvrouter.ingress.debug-endpoints}. */
  private Route debug() {
    if (!settings.debugEndpoints()) {
      return notFound();
    }
    return post(
        () ->
            concat(
                path(
                    "pause-events",
                    () -> {
                      admin.pauseEvents(true);
                      return json(200, "{\"events\":\"paused\"}");
                    }),
                path(
                    "resume-events",
                    () -> {
                      admin.pauseEvents(false);
                      return json(200, "{\"events\":\"resumed\"}");
                    }),
                path(
                    "diverge",
                    () ->
                        parameter(
                            "replica",
                            replica -> {
                              admin.diverge(replica);
                              return json(
                                  200, "{\"diverged\":\"" + replica.replace("\"", "") + "\"}");
                            }))));
  }

  private Route inference(Endpoint endpoint) {
    return extractRequest(request -> completeWithFuture(inference.handle(endpoint, request)));
  }

  private Route models() {
    TreeSet<String> ids = new TreeSet<>(router.servedModels());
    ObjectNode list = mapper.createObjectNode().put("object", "list");
    ArrayNode data = list.putArray("data");
    for (String id : ids) {
      ObjectNode m = data.addObject();
      m.put("id", id);
      m.put("object", "model");
      m.put("created", 0);
      m.put("owned_by", "kvrouter");
      tokenizers.find(id).ifPresent(t -> m.put("max_model_len", t.maxModelLen()));
      String base = router.baseModel(id);
      if (!base.equals(id)) {
        m.put("parent", base); // a LoRA adapter, listed as vLLM lists it
      }
    }
    return json(200, list.toString());
  }

  private Route ready() {
    return onSuccess(admin.ready(), ready -> json(ready ? 200 : 503, "{\"ready\":" + ready + "}"));
  }

  /**
   * Admin routes need {@code Authorization: Bearer <kvrouter.ingress.admin-token>} when a token is
   * configured; anything else gets 401 here (a rejection would fall through to the 404 route).
   */
  private Route authorized(java.util.function.Supplier<Route> inner) {
    if (settings.adminToken().isEmpty()) {
      return inner.get();
    }
    String expected = "Bearer " + settings.adminToken();
    return optionalHeaderValueByName(
        "Authorization",
        header -> {
          if (header.isPresent()
              && java.security.MessageDigest.isEqual(
                  header.get().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                  expected.getBytes(java.nio.charset.StandardCharsets.UTF_8))) {
            return inner.get();
          }
          return complete(
              HttpResponse.create()
                  .withStatus(401)
                  .addHeader(
                      org.apache.pekko.http.javadsl.model.headers.RawHeader.create(
                          "WWW-Authenticate", "Bearer realm=\"kvrouter-admin\""))
                  .withEntity(
                      HttpEntities.create(
                          ContentTypes.APPLICATION_JSON,
                          new ApiError(
                                  401,
                                  "This endpoint needs the admin bearer token.",
                                  "invalid_request_error",
                                  null,
                                  "unauthorized",
                                  0)
                              .toOpenAi()
                              .toString())));
        });
  }

  /**
   * Anything unrouted: 404, or 405 for a known inference path asked with another method; in
   * Anthropic's error shape under {@code /v1/messages}, OpenAI's elsewhere.
   */
  private Route notFound() {
    return extractRequest(
        request -> {
          String path = request.getUri().path();
          boolean known =
              path.equals("/v1/messages")
                  || path.equals("/v1/messages/count_tokens")
                  || path.equals("/v1/responses")
                  || path.equals("/v1/chat/completions")
                  || path.equals("/v1/completions");
          ApiError error =
              known
                  ? new ApiError(
                      405,
                      request.method().name() + " is not allowed on " + path + "; use POST.",
                      "invalid_request_error",
                      null,
                      "method_not_allowed",
                      0)
                  : new ApiError(
                      404,
                      "No route for " + path + ".",
                      "invalid_request_error",
                      null,
                      "not_found",
                      0);
          return complete(
              InferenceHandler.errorResponse(
                  path.startsWith("/v1/messages") ? Endpoint.MESSAGES : Endpoint.CHAT, error));
        });
  }

  private Route json(int status, String body) {
    return complete(
        HttpResponse.create()
            .withStatus(status)
            .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body)));
  }
}
