package io.kvrouter.agent.trtllm;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;

/**
 * How the agent reads a TensorRT-LLM engine's KV cache events ({@code
 * kvrouter.agent.engine.tensorrt-llm} in {@code reference.conf}, where each is explained).
 *
 * @param eventsPath the route of {@code trtllm-serve} that hands out the queued events
 * @param pollInterval wait after an empty or failed poll before the next one
 * @param requestTimeout longest wait for one poll's answer
 */
public record TrtllmSettings(String eventsPath, Duration pollInterval, Duration requestTimeout) {

  public TrtllmSettings {
    if (eventsPath == null || !eventsPath.startsWith("/")) {
      throw new IllegalArgumentException(
          "kvrouter.agent.engine.tensorrt-llm.events-path must start with '/', was " + eventsPath);
    }
    if (pollInterval.isNegative() || pollInterval.isZero() || requestTimeout.isNegative()) {
      throw new IllegalArgumentException(
          "kvrouter.agent.engine.tensorrt-llm: poll-interval must be positive, request-timeout"
              + " not negative");
    }
  }

  /** Reads {@code kvrouter.agent.engine.tensorrt-llm}. */
  public static TrtllmSettings fromConfig(Config c) {
    return new TrtllmSettings(
        c.getString("events-path"),
        c.getDuration("poll-interval"),
        c.getDuration("request-timeout"));
  }

  /** The defaults of {@code reference.conf}. */
  public static TrtllmSettings defaults() {
    return fromConfig(
        ConfigFactory.defaultReference().getConfig("kvrouter.agent.engine.tensorrt-llm"));
  }
}
