package io.kvrouter.loadtest.bench;

import java.net.URI;

/** The OpenAI-compatible endpoint a run targets. */
public enum BenchEndpoint {
  /** {@code POST /v1/completions}: text or token-id prompts. */
  COMPLETIONS("/v1/completions"),
  /** {@code POST /v1/chat/completions}: chat messages (a text prompt becomes one user message). */
  CHAT("/v1/chat/completions");

  private final String path;

  BenchEndpoint(String path) {
    this.path = path;
  }

  /** The path under the server root, e.g. {@code /v1/completions}. */
  public String path() {
    return path;
  }

  /**
   * The endpoint's URI under {@code base}. The base may be the server root ({@code http://h:8000})
   * or the OpenAI-style base URL ending in {@code /v1}.
   */
  public URI under(URI base) {
    return URI.create(root(base) + path);
  }

  /** The server root of {@code base}: no trailing slash and no trailing {@code /v1}. */
  static String root(URI base) {
    String s = base.toString();
    while (s.endsWith("/")) {
      s = s.substring(0, s.length() - 1);
    }
    if (s.endsWith("/v1")) {
      s = s.substring(0, s.length() - 3);
    }
    return s;
  }
}
