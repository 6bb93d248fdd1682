package io.kvrouter.ingress.tokenize;

/**
 * A chat template could not be rendered: the template called {@code raise_exception} (usually
 * because the conversation breaks its rules, e.g. roles out of order) or failed to evaluate. The
 * HTTP layer should answer 400 with {@link #getMessage()}.
 */
public final class ChatTemplateException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message fit for the client. */
  public ChatTemplateException(String message) {
    super(message);
  }

  /** Creates the exception with a message fit for the client and its cause. */
  public ChatTemplateException(String message, Throwable cause) {
    super(message, cause);
  }
}
