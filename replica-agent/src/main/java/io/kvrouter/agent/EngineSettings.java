package io.kvrouter.agent;

import com.typesafe.config.Config;
import io.kvrouter.agent.trtllm.TrtllmSettings;

/**
 * What the operator says about the agent's engine ({@code kvrouter.agent.engine} in {@code
 * reference.conf}, where each is explained), announced with its replicas beside what the engine
 * says of itself ({@link EngineProbe#identity}).
 *
 * @param kind the engine software: {@code vllm}, {@code sglang} or {@code tensorrt-llm}
 * @param hashAlgo the engine's prefix-caching hash algorithm, or blank to learn it from the engine
 * @param tensorrtLlm how a TensorRT-LLM engine's events are read (used when {@code kind} says so)
 */
public record EngineSettings(String kind, String hashAlgo, TrtllmSettings tensorrtLlm) {

  /** The kind of a TensorRT-LLM engine, whose events the agent polls over HTTP. */
  public static final String TENSORRT_LLM = "tensorrt-llm";

  /** A vLLM engine whose hash algorithm is learned from its metrics. */
  public static final EngineSettings VLLM = new EngineSettings("vllm", "");

  /** An engine of {@code kind} with the TensorRT-LLM defaults of {@code reference.conf}. */
  public EngineSettings(String kind, String hashAlgo) {
    this(kind, hashAlgo, TrtllmSettings.defaults());
  }

  public EngineSettings {
    if (kind == null || kind.isBlank()) {
      throw new IllegalArgumentException("kvrouter.agent.engine.kind must not be blank");
    }
    hashAlgo = hashAlgo == null ? "" : hashAlgo;
    tensorrtLlm = tensorrtLlm == null ? TrtllmSettings.defaults() : tensorrtLlm;
  }

  /** True when the engine is TensorRT-LLM (its events are polled, not subscribed to). */
  public boolean isTensorrtLlm() {
    return TENSORRT_LLM.equals(kind);
  }

  /** Reads {@code kvrouter.agent.engine}. */
  public static EngineSettings fromConfig(Config c) {
    return new EngineSettings(
        c.getString("kind"),
        c.getString("hash-algo"),
        TrtllmSettings.fromConfig(c.getConfig("tensorrt-llm")));
  }
}
