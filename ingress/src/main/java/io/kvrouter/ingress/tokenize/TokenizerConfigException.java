package io.kvrouter.ingress.tokenize;

/**
 * The tokenizer configuration cannot be used: a file is missing or broken, a value is invalid, or a
 * model is unknown. The message names the model, key or file at fault. Thrown at start-up (a node
 * must not start with a broken model) and by {@link TokenizerRegistry#get} for an unknown model
 * (the HTTP layer answers 404 with the message).
 */
public final class TokenizerConfigException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception. */
  public TokenizerConfigException(String message) {
    super(message);
  }

  /** Creates the exception with its cause. */
  public TokenizerConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
