package io.kvrouter.ingress.api;

/**
 * The inference endpoints the ingress serves, and the engine path each is proxied to when the
 * engine is spoken to in OpenAI chat and completions (an engine that serves an endpoint's own
 * protocol may be sent the request unchanged instead: see {@link EngineExchange}).
 */
public enum Endpoint {
  /** OpenAI {@code POST /v1/completions}. */
  COMPLETIONS("/v1/completions", false),
  /** OpenAI {@code POST /v1/chat/completions}. */
  CHAT("/v1/chat/completions", false),
  /** Anthropic {@code POST /v1/messages}, translated to chat for OpenAI-only engines. */
  MESSAGES("/v1/chat/completions", true),
  /** Anthropic {@code POST /v1/messages/count_tokens}, answered by the ingress itself. */
  COUNT_TOKENS("/v1/messages/count_tokens", true),
  /** OpenAI {@code POST /v1/responses}, for engines that serve it. */
  RESPONSES("/v1/responses", false);

  private final String enginePath;
  private final boolean anthropic;

  Endpoint(String enginePath, boolean anthropic) {
    this.enginePath = enginePath;
    this.anthropic = anthropic;
  }

  /** Path on an OpenAI-compatible engine this endpoint is forwarded to. */
  public String enginePath() {
    return enginePath;
  }

  /** True for the Anthropic endpoints, whose errors take Anthropic's shape. */
  public boolean anthropic() {
    return anthropic;
  }
}
