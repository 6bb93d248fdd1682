package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * An error answered to a client, in the shape the official SDKs parse.
 *
 * <p>OpenAI: {@code {"error":{"message","type","param","code"}}}. Anthropic (for {@code
 * /v1/messages}): {@code {"type":"error","error":{"type","message"}}} with Anthropic's type names
 * (see docs.anthropic.com "Errors": invalid_request_error, not_found_error, request_too_large,
 * authentication_error, permission_error, rate_limit_error, api_error, overloaded_error).
 *
 * @param status HTTP status code
 * @param message what went wrong, for a person
 * @param type OpenAI error type, e.g. {@code invalid_request_error}
 * @param param the offending request field, or {@code null}
 * @param code a machine-readable code, or {@code null}
 * @param retryAfterSeconds value of a {@code Retry-After} header, or 0 for none
 */
public record ApiError(
    int status, String message, String type, String param, String code, int retryAfterSeconds) {

  /** 400 for a request that cannot be served as sent. */
  public static ApiError invalid(String message, String param, String code) {
    return new ApiError(400, message, "invalid_request_error", param, code, 0);
  }

  /** 404 for a model no replica serves and none is configured. */
  public static ApiError modelNotFound(String model) {
    return new ApiError(
        404,
        "The model '" + model + "' does not exist or no replica serves it.",
        "invalid_request_error",
        "model",
        "model_not_found",
        0);
  }

  /** 413 for a body over the configured limit. */
  public static ApiError tooLarge(long limitBytes) {
    return new ApiError(
        413,
        "Request body exceeds the limit of " + limitBytes + " bytes.",
        "invalid_request_error",
        null,
        "request_too_large",
        0);
  }

  /** 429 when every replica is busy and the router queue is full. */
  public static ApiError overloaded(String message, int retryAfterSeconds) {
    return new ApiError(
        429, message, "rate_limit_error", null, "rate_limit_exceeded", retryAfterSeconds);
  }

  /** 503 when no replica can take the request at all. */
  public static ApiError unavailable(String message, int retryAfterSeconds) {
    return new ApiError(
        503, message, "server_error", null, "service_unavailable", retryAfterSeconds);
  }

  /** 502 when every attempt at a replica failed before it answered. */
  public static ApiError upstream(String message) {
    return new ApiError(502, message, "server_error", null, "upstream_error", 0);
  }

  /**
   * An engine's error answer ({@code {"error":{"message","type","param"}}} from an
   * OpenAI-compatible engine, or anything else) with its status, to be told to the client in its
   * own protocol.
   */
  public static ApiError fromEngine(int status, com.fasterxml.jackson.databind.JsonNode body) {
    com.fasterxml.jackson.databind.JsonNode error = body == null ? null : body.path("error");
    String message =
        error != null && error.path("message").isTextual()
            ? error.get("message").asText()
            : "The replica answered " + status + ".";
    String param =
        error != null && error.path("param").isTextual() ? error.get("param").asText() : null;
    return new ApiError(
        status, message, status >= 500 ? "server_error" : "invalid_request_error", param, null, 0);
  }

  /** OpenAI's error object. */
  public ObjectNode toOpenAi() {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    ObjectNode error = root.putObject("error");
    error.put("message", message);
    error.put("type", type);
    error.put("param", param);
    error.put("code", code);
    return root;
  }

  /** Anthropic's error object. */
  public ObjectNode toAnthropic() {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    root.put("type", "error");
    ObjectNode error = root.putObject("error");
    error.put("type", anthropicType());
    error.put("message", message);
    return root;
  }

  private String anthropicType() {
    return switch (status) {
      case 401 -> "authentication_error";
      case 403 -> "permission_error";
      case 404 -> "not_found_error";
      case 413 -> "request_too_large";
      case 429 -> "rate_limit_error";
      case 503, 529 -> "overloaded_error";
      default -> status >= 500 ? "api_error" : "invalid_request_error";
    };
  }
}
