package io.kvrouter.ingress.routing;

/**
 * A replica a request can be forwarded to.
 *
 * @param replicaId routable target id
 * @param baseUrl the engine's OpenAI-compatible base URL, without a trailing slash
 * @param acceptsTokenIds whether {@code /v1/completions} takes a token-id prompt there
 */
public record Target(String replicaId, String baseUrl, boolean acceptsTokenIds) {}
