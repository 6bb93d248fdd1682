package io.kvrouter.agent.trtllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.agent.kvevents.EngineFeed;
import io.kvrouter.agent.kvevents.EngineStreamHandler;
import io.kvrouter.agent.kvevents.KvEventSubscriber;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one TensorRT-LLM engine's KV cache events inside the agent, on a daemon thread of its own:
 * {@code POST <engine><events-path>} ({@code trtllm-serve}'s {@code /kv_cache_events} route, which
 * drains the engine's event queue and answers the events as a JSON array: {@code
 * tensorrt_llm/serve/openai_server.py}, {@code get_kv_cache_events}, NVIDIA/TensorRT-LLM at {@code
 * 00057725}), handed to a {@link TrtllmEventTranslator} that feeds the replica's pipeline. Polls
 * again at once after events came, after {@code poll-interval} when none did or the engine did not
 * answer.
 *
 * <p>Why in the agent and not a side process beside the engine (Dynamo's design, which reads the
 * events inside the engine's Python process with {@code get_kv_cache_events_async}): the HTTP route
 * already exposes them, so the operator runs nothing more than {@code trtllm-serve} and the agent,
 * and points the replica's kv-events endpoint at the engine's address. The route drains one queue,
 * so one reader per engine: another client polling it takes events the agent then misses, which the
 * agent sees as a gap and answers by clearing the replica.
 *
 * <p>Health: the agent's health calls queue work for this thread. An interruption is settled
 * ({@link KvEventSubscriber.Listener#onSettled}) by the first poll answered after the healthy
 * check: a restarted engine's queue begins with its {@code created} events at id 0, so that poll
 * shows the restart (the replica is cleared first) or continues the ids (the blocks stand). An
 * empty answer means nothing happened that the next events will not show: a restart always queues
 * events.
 *
 * <p>Thread-safe: the public methods only queue work or read counters.
 */
public final class TrtllmEventPoller implements EngineFeed {

  private static final Logger log = LoggerFactory.getLogger(TrtllmEventPoller.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI eventsUri;
  private final TrtllmSettings settings;
  private final TrtllmEventTranslator translator;
  private final EngineStreamHandler handler;
  private final KvEventSubscriber.Listener listener;
  private final String threadName;
  private final HttpClient http;
  private final Queue<Runnable> inbox = new ConcurrentLinkedQueue<>();
  private final AtomicLong polls = new AtomicLong();
  private final AtomicLong failedPolls = new AtomicLong();
  private final AtomicLong malformed = new AtomicLong();
  private final AtomicLong restarts = new AtomicLong();
  private final AtomicLong gaps = new AtomicLong();
  private volatile boolean running = true;
  private Thread thread;
  private long healthyTick = -1;
  private long settledTick = -1;
  private boolean answering = true;

  /**
   * @param engineUrl the engine's {@code http://host:port} (the replica's kv-events endpoint)
   * @param blockSize the replica's block size
   * @param rank the replica's attention-DP rank (0 without)
   * @param handler the replica's pipeline, called on this poller's thread
   * @param threadName the thread's name (say which replica)
   * @param settings the path, poll interval and timeout
   * @param listener hears of restarts and settled health checks
   */
  public TrtllmEventPoller(
      String engineUrl,
      int blockSize,
      int rank,
      EngineStreamHandler handler,
      String threadName,
      TrtllmSettings settings,
      KvEventSubscriber.Listener listener) {
    if (!polls(engineUrl)) {
      throw new IllegalArgumentException(
          "a TensorRT-LLM replica's kv-events endpoint must be the engine's http://host:port"
              + " (its events are polled over HTTP), was "
              + engineUrl);
    }
    String base =
        engineUrl.endsWith("/") ? engineUrl.substring(0, engineUrl.length() - 1) : engineUrl;
    this.eventsUri = URI.create(base + settings.eventsPath());
    this.settings = settings;
    this.translator = new TrtllmEventTranslator(blockSize, rank, handler);
    this.handler = handler;
    this.listener = listener;
    this.threadName = threadName;
    this.http = HttpClient.newBuilder().connectTimeout(settings.requestTimeout()).build();
  }

  /**
   * True when {@code endpoint} is an engine's HTTP address, whose {@code /kv_cache_events} this
   * poller reads. Any other endpoint of a TensorRT-LLM replica is a ZMQ one: builds with KV cache
   * manager V2 can publish over ZMQ instead ({@code ZmqEventPublisher}, {@code
   * tensorrt_llm/_torch/pyexecutor/kv_cache_events.py} at {@code 44004b38}: vLLM's three-frame
   * framing, sequence and replay, with events as maps tagged by {@code "type"}), which the agent
   * subscribes to as to vLLM's.
   */
  public static boolean polls(String endpoint) {
    return endpoint != null && (endpoint.startsWith("http://") || endpoint.startsWith("https://"));
  }

  /** Starts the polling thread. */
  public TrtllmEventPoller start() {
    thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  @Override
  public void healthLost() {
    // Nothing to hold: a lost check is settled by the first poll answered after a healthy one.
  }

  @Override
  public void healthy(long tick, double processStartSeconds) {
    inbox.add(() -> healthyTick = Math.max(healthyTick, tick));
  }

  private void run() {
    while (running) {
      long asOf = drainInbox();
      boolean gotEvents;
      try {
        Poll poll = pollOnce();
        gotEvents = poll == Poll.EVENTS;
        if (poll != Poll.UNANSWERED && asOf > settledTick) {
          settledTick = asOf;
          listener.onSettled(asOf);
        }
      } catch (RuntimeException e) {
        // A bug in translating or in the pipeline must not end the thread; the replica's picture
        // may lack that poll's events, so it starts afresh.
        log.error("{}: TensorRT-LLM events could not be handled", threadName, e);
        malformed.incrementAndGet();
        handler.onUnrecoverableGap(translator.lastEventId(), translator.lastEventId() + 1);
        gotEvents = false;
      }
      if (!gotEvents && running) {
        LockSupport.parkNanos(settings.pollInterval().toNanos());
      }
    }
  }

  /** Runs queued health calls; returns the newest healthy tick they brought. */
  private long drainInbox() {
    for (Runnable r; (r = inbox.poll()) != null; ) {
      r.run();
    }
    return healthyTick;
  }

  private enum Poll {
    UNANSWERED,
    EMPTY,
    EVENTS
  }

  /**
   * One poll. An unanswered one leaves the settle to a later one (the engine being down is the
   * health check's to report).
   */
  private Poll pollOnce() {
    HttpResponse<String> r;
    try {
      r =
          http.send(
              HttpRequest.newBuilder(eventsUri)
                  .timeout(settings.requestTimeout())
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      notAnswering(e.toString());
      return Poll.UNANSWERED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
      return Poll.UNANSWERED;
    }
    polls.incrementAndGet();
    if (r.statusCode() != 200) {
      notAnswering(eventsUri + " answered " + r.statusCode());
      return Poll.UNANSWERED;
    }
    if (!answering) {
      log.info("{}: {} answers again", threadName, eventsUri);
      answering = true;
    }
    JsonNode events;
    try {
      events = JSON.readTree(r.body());
    } catch (IOException e) {
      malformed.incrementAndGet();
      log.warn("{}: {} answered something not JSON: {}", threadName, eventsUri, e.getMessage());
      return Poll.EMPTY;
    }
    TrtllmEventTranslator.Outcome o = translator.accept(events);
    malformed.addAndGet(o.malformed());
    if (o.gap()) {
      gaps.incrementAndGet();
    }
    if (o.restarted()) {
      restarts.incrementAndGet();
      log.warn("{}: TensorRT-LLM event ids started again: the engine restarted", threadName);
      listener.onRestart();
    }
    return o.events() + o.ignored() > 0 ? Poll.EVENTS : Poll.EMPTY;
  }

  private void notAnswering(String why) {
    failedPolls.incrementAndGet();
    if (answering) {
      log.warn("{}: TensorRT-LLM events not readable ({}); polling on", threadName, why);
      answering = false;
    }
  }

  /** Polls answered so far. */
  public long polls() {
    return polls.get();
  }

  /** Polls the engine did not answer (down, or not {@code trtllm-serve}). */
  public long failedPolls() {
    return failedPolls.get();
  }

  /** Answers or events that could not be read. */
  public long malformed() {
    return malformed.get();
  }

  /** Engine restarts seen in the event ids. */
  public long restarts() {
    return restarts.get();
  }

  /** Gaps seen in the event ids (each cleared the replica). */
  public long gaps() {
    return gaps.get();
  }

  @Override
  public void close() {
    running = false;
    if (thread != null) {
      thread.interrupt(); // ends a poll in flight (trtllm-serve holds an idle one up to 2 s)
      try {
        thread.join(settings.requestTimeout().plus(settings.pollInterval()).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
