package io.kvrouter.agent;

import io.kvrouter.agent.kvevents.EngineFeed;
import io.kvrouter.agent.kvevents.KvEventSubscriber;
import io.kvrouter.agent.trtllm.TrtllmEventPoller;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.ReplayReply;
import io.kvrouter.protocol.Replayed;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.SnapshotReply;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The event plane of one replica as its {@link ReplicaAgent} drives it: the {@link
 * ReplicaEventPipeline} the replica's {@link EngineFeed} thread feeds (a {@link KvEventSubscriber},
 * or a {@link TrtllmEventPoller} for a TensorRT-LLM engine whose events are an HTTP route), that
 * feed, and the {@link AlignmentProbe} that checks the engine's blocks are keyed as the router keys
 * them. In approximate mode (the replica has no KV-event endpoint) there is none of them: {@link
 * #NONE} publishes nothing about blocks, answers every replay with an empty one, and its health
 * calls do nothing, so the actor needs no null checks.
 *
 * <p>Thread-safety: the pipeline is guarded by its own lock (the subscriber thread writes it); the
 * subscriber's health calls queue a command for its thread. The actor is the only caller of this
 * class.
 */
interface AgentEventPlane {

  /** Approximate mode: no event plane at all. */
  AgentEventPlane NONE = new AgentEventPlane() {};

  /**
   * Starts the plane of {@code spec}'s replica (its subscriber thread runs from now on), or gives
   * {@link #NONE} when the replica has no KV-event endpoint.
   *
   * @param sink where the pipeline's batches go (the events topic)
   * @param listener told of engine restarts and settled health checks, on the subscriber's thread
   */
  static AgentEventPlane start(
      ReplicaSpec spec,
      AgentSettings settings,
      EngineProbe engine,
      BatchSink sink,
      KvEventSubscriber.Listener listener) {
    if (!spec.kvEvents()) {
      return NONE;
    }
    RouterKeyFunction keys = settings.keyFunctions().apply(spec.model());
    ReplicaEventPipeline pipeline =
        new ReplicaEventPipeline(
            spec.info().targetId(),
            keys,
            spec.blockSize(),
            settings.ringCapacity(),
            settings.knownHashes(),
            sink);
    EngineFeed subscriber =
        settings.engine().isTensorrtLlm() && TrtllmEventPoller.polls(spec.kvEventsEndpoint())
            ? new TrtllmEventPoller(
                    spec.kvEventsEndpoint(),
                    spec.blockSize(),
                    spec.dpSize() > 1 ? spec.dpRank() : 0,
                    pipeline,
                    "kv-events-" + spec.info().targetId(),
                    settings.engine().tensorrtLlm(),
                    listener)
                .start()
            : new KvEventSubscriber(
                    spec.kvEventsEndpoint(),
                    spec.replayEndpoint(),
                    spec.topicFilter(),
                    pipeline,
                    "kv-events-" + spec.info().targetId(),
                    settings.kvEvents(),
                    listener)
                .start();
    AlignmentProbe probe =
        new AlignmentProbe(
            spec, keys, settings.tokenizers().apply(spec.model()), settings.alignment(), engine);
    return new Streamed(pipeline, subscriber, probe);
  }

  /** The stream's epoch (0 without a stream). */
  default long epoch() {
    return 0;
  }

  /** {@code load} with the stream's watermark, so a tracker that lost the last batches sees it. */
  default ReplicaLoad stamp(ReplicaLoad load) {
    return load;
  }

  /**
   * The answer to {@code m}: at most {@code maxBatches} of the batches it missed (a bounded reply
   * keeps each message well under the remoting frame size; a tracker still behind asks again: its
   * next batch or heartbeat shows the remaining gap), or a snapshot when the ring no longer holds
   * them or the epoch is over.
   */
  default ReplayReply replay(RequestReplay m, int maxBatches) {
    return new Replayed(m.replicaId(), m.epoch(), new KvEventBatch[0]);
  }

  /** A health check failed ({@link KvEventSubscriber#healthLost}). */
  default void healthLost() {}

  /** Health check {@code tick} passed ({@link KvEventSubscriber#healthy}). */
  default void healthy(long tick, double processStartSeconds) {}

  /** Runs the alignment probe (only asked for when the gate wants one, which needs a stream). */
  default CompletionStage<AlignmentProbe.Result> probe(long nonce) {
    throw new IllegalStateException("no event plane to probe");
  }

  /** Stops the subscriber's thread. */
  default void close() {}

  /** The plane of a replica that publishes KV events. */
  record Streamed(ReplicaEventPipeline pipeline, EngineFeed subscriber, AlignmentProbe alignment)
      implements AgentEventPlane {

    @Override
    public long epoch() {
      return pipeline.epoch();
    }

    @Override
    public ReplicaLoad stamp(ReplicaLoad load) {
      return pipeline.stamp(load);
    }

    @Override
    public ReplayReply replay(RequestReplay m, int maxBatches) {
      Optional<List<KvEventBatch>> batches = pipeline.replay(m.epoch(), m.fromSeq());
      if (batches.isEmpty()) {
        return new SnapshotReply(pipeline.snapshot());
      }
      List<KvEventBatch> first =
          batches.get().subList(0, Math.min(maxBatches, batches.get().size()));
      return new Replayed(m.replicaId(), m.epoch(), first.toArray(KvEventBatch[]::new));
    }

    @Override
    public void healthLost() {
      subscriber.healthLost();
    }

    @Override
    public void healthy(long tick, double processStartSeconds) {
      subscriber.healthy(tick, processStartSeconds);
    }

    @Override
    public CompletionStage<AlignmentProbe.Result> probe(long nonce) {
      return alignment.run(pipeline, nonce);
    }

    @Override
    public void close() {
      subscriber.close();
    }
  }
}
