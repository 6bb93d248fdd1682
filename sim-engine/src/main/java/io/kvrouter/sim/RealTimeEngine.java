package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link SimEngineCore} in real time on its own thread ({@code sim-engine-loop}): each pass
 * is planned at the current time and the thread sleeps for the pass's duration before its tokens
 * are delivered and its KV events published, so clients see the timing model's latencies. Every
 * interaction with the core goes through a command queue served by that thread.
 *
 * <p>Thread-safe. Listeners are called on the loop thread and must not block.
 */
public final class RealTimeEngine implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RealTimeEngine.class);

  /** Receives one request's tokens, on the loop thread. */
  public interface RequestListener {
    void onToken(Emission emission);

    /** The engine rejected the request (the message is the reason) or shut down. */
    void onError(String message);
  }

  /** A consistent view of the engine's gauges and counters (vLLM /metrics). */
  public record Stats(
      int running,
      int waiting,
      double kvUsage,
      long prefixQueries,
      long prefixHits,
      long finished,
      int cachedBlocks,
      long cpuLoadedBlocks) {}

  private final SimEngineCore core;
  private final KvEventPublisher publisher;
  private final Integer dpRank;
  private final LinkedBlockingQueue<Consumer<SimEngineCore>> commands = new LinkedBlockingQueue<>();
  private final Map<String, RequestListener> listeners = new HashMap<>();
  private final List<EngineEvent> pendingEvents = new ArrayList<>();
  private final long startNanos = System.nanoTime();
  private volatile Stats stats = new Stats(0, 0, 0, 0, 0, 0, 0, 0);
  private volatile boolean running = true;
  private Thread thread;

  /**
   * @param config the engine's shape
   * @param publisher where KV events go (started), or null for none
   * @param dpRank data-parallel rank stamped on event batches
   */
  public RealTimeEngine(SimEngineConfig config, KvEventPublisher publisher, int dpRank) {
    this.core = new SimEngineCore(config);
    this.publisher = publisher;
    this.dpRank = dpRank;
    core.setKvEventListener((events, at) -> pendingEvents.addAll(events));
  }

  public SimEngineConfig config() {
    return core.config();
  }

  /** The data-parallel rank this engine core is (0 without data parallelism). */
  public int dpRank() {
    return dpRank;
  }

  public RealTimeEngine start() {
    thread = new Thread(this::loop, "sim-engine-loop");
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  /** Queues a request; its tokens (or its rejection) go to the listener. */
  public void submit(SimRequest request, RequestListener listener) {
    submit(request, listener, false);
  }

  /**
   * Queues a request, whose prompt's KV was transferred from a prefill engine when {@code
   * remotePrefilled} ({@link SimEngineCore#submitRemotePrefilled}).
   */
  public void submit(SimRequest request, RequestListener listener, boolean remotePrefilled) {
    commands.add(
        c -> {
          try {
            if (remotePrefilled) {
              c.submitRemotePrefilled(request, nowMicros());
            } else {
              c.submit(request, nowMicros());
            }
            listeners.put(request.requestId(), listener);
          } catch (IllegalArgumentException e) {
            listener.onError(e.getMessage());
          }
        });
  }

  /** Drops a request whose client went away. */
  public void abort(String requestId) {
    commands.add(
        c -> {
          listeners.remove(requestId);
          c.abort(requestId);
        });
  }

  /** Runs a read or a control action on the loop thread; completes with its result. */
  public <T> CompletableFuture<T> query(Function<SimEngineCore, T> f) {
    CompletableFuture<T> out = new CompletableFuture<>();
    commands.add(
        c -> {
          try {
            out.complete(f.apply(c));
          } catch (RuntimeException e) {
            out.completeExceptionally(e);
          }
          flushEvents();
        });
    return out;
  }

  /** The latest gauges and counters (updated after every pass). */
  public Stats stats() {
    return stats;
  }

  private long nowMicros() {
    return (System.nanoTime() - startNanos) / 1_000;
  }

  private void loop() {
    try {
      while (running) {
        Consumer<SimEngineCore> cmd =
            core.hasWork() ? commands.poll() : commands.poll(50, TimeUnit.MILLISECONDS);
        while (cmd != null) {
          cmd.accept(core);
          cmd = commands.poll();
        }
        if (!core.hasWork()) {
          updateStats();
          continue;
        }
        StepResult pass = core.step(nowMicros());
        long wakeAt = startNanos + pass.endMicros() * 1_000;
        for (long left = wakeAt - System.nanoTime();
            left > 0 && running;
            left = wakeAt - System.nanoTime()) {
          LockSupport.parkNanos(left);
        }
        flushEvents();
        for (Emission e : pass.emissions()) {
          RequestListener l =
              e.finished() ? listeners.remove(e.requestId()) : listeners.get(e.requestId());
          if (l != null) {
            l.onToken(e);
          }
        }
        updateStats();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.error("simulated engine loop failed", e);
    } finally {
      for (RequestListener l : listeners.values()) {
        l.onError("engine shut down");
      }
      listeners.clear();
    }
  }

  private void flushEvents() {
    if (pendingEvents.isEmpty()) {
      return;
    }
    if (publisher != null) {
      publisher.publish(
          new EngineEventBatch(System.currentTimeMillis() / 1000.0, pendingEvents, dpRank));
    }
    pendingEvents.clear();
  }

  private void updateStats() {
    stats =
        new Stats(
            core.runningCount(),
            core.waitingCount(),
            core.kvCacheUsage(),
            core.prefixCacheQueries(),
            core.prefixCacheHits(),
            core.finishedRequests(),
            core.cachedBlockCount(),
            core.cpuLoadedBlocks());
  }

  @Override
  public void close() {
    running = false;
    if (thread != null) {
      thread.interrupt();
      try {
        thread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
