package io.kvrouter.agent.sim;

/**
 * A client error of the simulated engine's OpenAI API, rendered as {@code
 * {"error":{"message","type","param","code"}}} with the HTTP status (as vLLM's {@code
 * ErrorResponse}).
 */
final class ApiError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  final int status;
  final String type;
  final String param;

  ApiError(int status, String type, String message, String param) {
    super(message);
    this.status = status;
    this.type = type;
    this.param = param;
  }

  static ApiError badRequest(String message, String param) {
    return new ApiError(400, "BadRequestError", message, param);
  }
}
