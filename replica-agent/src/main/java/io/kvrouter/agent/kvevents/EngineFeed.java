package io.kvrouter.agent.kvevents;

/**
 * What feeds one replica's {@link EngineStreamHandler} from its engine, as the agent actor drives
 * it: vLLM's and SGLang's ZMQ stream ({@link KvEventSubscriber}) or TensorRT-LLM's HTTP event queue
 * ({@code io.kvrouter.agent.trtllm.TrtllmEventPoller}). Each runs on a thread of its own; these
 * calls queue work for that thread and return at once.
 */
public interface EngineFeed extends AutoCloseable {

  /** The engine failed a health check: whatever comes next must prove it is the same process. */
  void healthLost();

  /**
   * The engine answered health check {@code tick}; once the feed has settled every interruption as
   * of it, it tells {@link KvEventSubscriber.Listener#onSettled}.
   *
   * @param processStartSeconds the engine's {@code process_start_time_seconds}, or NaN
   */
  void healthy(long tick, double processStartSeconds);

  /** Stops the feed's thread. */
  @Override
  void close();
}
