package io.kvrouter.sim;

import io.kvrouter.protocol.engine.EngineEvent;
import java.util.List;

/**
 * What one pass of a {@link SimEngineCore} did.
 *
 * @param startMicros when the pass started
 * @param durationMicros how long it takes (0 when there was nothing to do)
 * @param emissions tokens produced, all ready at {@code startMicros + durationMicros}
 * @param kvEvents the engine's KV events of the pass, in order (empty if none)
 * @param prefillTokens uncached prompt tokens computed
 * @param decodeTokens requests that decoded a token
 */
public record StepResult(
    long startMicros,
    long durationMicros,
    List<Emission> emissions,
    List<EngineEvent> kvEvents,
    int prefillTokens,
    int decodeTokens) {

  /** When the pass ends. */
  public long endMicros() {
    return startMicros + durationMicros;
  }

  /** True when the pass scheduled nothing. */
  public boolean idle() {
    return durationMicros == 0 && emissions.isEmpty();
  }
}
