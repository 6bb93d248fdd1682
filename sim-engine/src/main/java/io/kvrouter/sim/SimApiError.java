package io.kvrouter.sim;

/**
 * A client error of the simulated engine's OpenAI API, rendered as {@code
 * {"error":{"message","type","param","code"}}} with the HTTP status (as vLLM's {@code
 * ErrorResponse}).
 */
public final class SimApiError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public final int status;
  final String type;
  final String param;

  SimApiError(int status, String type, String message, String param) {
    super(message);
    this.status = status;
    this.type = type;
    this.param = param;
  }

  static SimApiError badRequest(String message, String param) {
    return new SimApiError(400, "BadRequestError", message, param);
  }
}
