package io.kvrouter.ingress.http;

import io.kvrouter.ingress.api.ApiError;
import java.util.Locale;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;

/**
 * Answers a request Pekko HTTP could not parse (a header over {@code
 * pekko.http.server.parsing.max-header-value-length}, a URI over its limit, a malformed request
 * line) with an OpenAI-style JSON error and the parser's status (431, 414, 400, ...), instead of
 * Pekko's plain-text default, so SDKs show the reason. Such a request never reaches a route, so its
 * path, and with it the Anthropic shape, is unknown: every client gets the OpenAI shape.
 *
 * <p>Pekko instantiates it by name ({@code pekko.http.server.parsing.error-handler}); {@link
 * IngressHttpServer} names it for the ingress's port only.
 */
public final class OpenAiParsingErrors extends ParsingErrorHandler {

  /** Instantiated by Pekko HTTP from the server settings. */
  public OpenAiParsingErrors() {}

  @Override
  public HttpResponse handle(
      StatusCode status, ErrorInfo info, LoggingAdapter log, ServerSettings settings) {
    log.warning(
        "illegal request, responding with status {}: {}", status.intValue(), info.summary());
    return HttpResponse.create()
        .withStatus(status.intValue())
        .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body(status, info)));
  }

  /** The OpenAI error body for a parse failure with {@code status}. */
  static String body(StatusCode status, ErrorInfo info) {
    String summary = info.summary().isEmpty() ? status.reason() : info.summary();
    return new ApiError(
            status.intValue(),
            summary + ".",
            status.intValue() >= 500 ? "server_error" : "invalid_request_error",
            null,
            code(status),
            0)
        .toOpenAi()
        .toString();
  }

  private static String code(StatusCode status) {
    return switch (status.intValue()) {
      case 431 -> "request_header_too_large";
      case 414 -> "request_uri_too_long";
      case 413 -> "request_too_large";
      default -> status.reason().toLowerCase(Locale.ROOT).replace(' ', '_');
    };
  }
}
