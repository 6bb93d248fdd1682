package io.kvrouter.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays timed arrivals through one {@link SimEngineCore} in virtual time: no sleeping, the clock
 * jumps from pass end to pass end (or to the next arrival when idle). The policy lab can drive N
 * cores the same way, interleaving them by their next pass end.
 *
 * <p>Not thread-safe; cost per pass is the core's.
 */
public final class VirtualTimeDriver {

  /** A request and when it arrives (virtual microseconds). */
  public record TimedRequest(long arrivalMicros, SimRequest request) {}

  /**
   * What happened to one request.
   *
   * @param requestId the request
   * @param arrivalMicros arrival
   * @param firstTokenMicros first token ready (TTFT = this − arrival)
   * @param finishMicros last token ready
   * @param promptTokens prompt length
   * @param cachedPromptTokens served from the prefix cache
   * @param outputTokens generated
   */
  public record RequestResult(
      String requestId,
      long arrivalMicros,
      long firstTokenMicros,
      long finishMicros,
      int promptTokens,
      int cachedPromptTokens,
      int outputTokens) {}

  private VirtualTimeDriver() {}

  /**
   * Runs every arrival to completion.
   *
   * @param core the engine (may already hold state, e.g. a warm cache)
   * @param arrivals sorted by arrival time
   * @return one result per request, in completion order
   */
  public static List<RequestResult> run(SimEngineCore core, List<TimedRequest> arrivals) {
    List<RequestResult> out = new ArrayList<>(arrivals.size());
    Map<String, Long> firstToken = new HashMap<>();
    long now = arrivals.isEmpty() ? 0 : arrivals.get(0).arrivalMicros();
    int next = 0;
    while (next < arrivals.size() || core.hasWork()) {
      while (next < arrivals.size() && arrivals.get(next).arrivalMicros() <= now) {
        TimedRequest t = arrivals.get(next++);
        core.submit(t.request(), t.arrivalMicros());
      }
      if (!core.hasWork()) {
        now = arrivals.get(next).arrivalMicros();
        continue;
      }
      StepResult pass = core.step(now);
      for (Emission e : pass.emissions()) {
        if (e.first()) {
          firstToken.put(e.requestId(), e.timeMicros());
        }
        if (e.finished()) {
          Long first = firstToken.remove(e.requestId());
          out.add(
              new RequestResult(
                  e.requestId(),
                  e.arrivalMicros(),
                  first == null ? e.timeMicros() : first,
                  e.timeMicros(),
                  e.promptTokens(),
                  e.cachedPromptTokens(),
                  e.index() + 1));
        }
      }
      now = Math.max(pass.endMicros(), now);
      if (pass.durationMicros() == 0 && next < arrivals.size()) {
        now = Math.max(now, arrivals.get(next).arrivalMicros());
      }
    }
    return out;
  }
}
