package io.kvrouter.ingress.api;

/** Carries an {@link ApiError} out of validation code to the HTTP edge. */
public final class ApiException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final transient ApiError error;

  public ApiException(ApiError error) {
    super(error.message(), null, false, false);
    this.error = error;
  }

  public ApiError error() {
    return error;
  }
}
