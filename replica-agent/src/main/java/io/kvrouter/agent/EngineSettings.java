package io.kvrouter.agent;

import com.typesafe.config.Config;

/**
 * What the operator says about the agent's engine ({@code kvrouter.agent.engine} in {@code
 * reference.conf}, where each is explained), announced with its replicas beside what the engine
 * says of itself ({@link EngineProbe#identity}).
 *
 * @param kind the engine software: {@code vllm}, {@code sglang} or {@code tensorrt-llm}
 * @param hashAlgo the engine's prefix-caching hash algorithm, or blank to learn it from the engine
 */
public record EngineSettings(String kind, String hashAlgo) {

  /** A vLLM engine whose hash algorithm is learned from its metrics. */
  public static final EngineSettings VLLM = new EngineSettings("vllm", "");

  public EngineSettings {
    if (kind == null || kind.isBlank()) {
      throw new IllegalArgumentException("kvrouter.agent.engine.kind must not be blank");
    }
    hashAlgo = hashAlgo == null ? "" : hashAlgo;
  }

  /** Reads {@code kvrouter.agent.engine}. */
  public static EngineSettings fromConfig(Config c) {
    return new EngineSettings(c.getString("kind"), c.getString("hash-algo"));
  }
}
