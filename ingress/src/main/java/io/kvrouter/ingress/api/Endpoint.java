package io.kvrouter.ingress.api;

/** The inference endpoints the ingress serves, and the engine path each is proxied to. */
public enum Endpoint {
  /** OpenAI {@code POST /v1/completions}. */
  COMPLETIONS("/v1/completions"),
  /** OpenAI {@code POST /v1/chat/completions}. */
  CHAT("/v1/chat/completions"),
  /** Anthropic {@code POST /v1/messages}, translated to chat for OpenAI-only engines. */
  MESSAGES("/v1/chat/completions");

  private final String enginePath;

  Endpoint(String enginePath) {
    this.enginePath = enginePath;
  }

  /** Path on the engine this endpoint is forwarded to. */
  public String enginePath() {
    return enginePath;
  }
}
