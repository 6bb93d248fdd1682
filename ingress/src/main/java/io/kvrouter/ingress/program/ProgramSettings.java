package io.kvrouter.ingress.program;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * How the ingress knows and serves programs (agent sessions), from {@value #PATH}.
 *
 * @param programHeader names a request's program when nothing else does
 * @param outputTokensHeader the client's expected output length, in tokens
 * @param toolCallHeader the client's word on whether this turn ends in a tool call
 * @param admission whether the router queue puts programs in mid-session ahead of new ones
 * @param oldestFirst the router queue's program order: the program that started first first (on) or
 *     the least attained service first (off)
 * @param newProgramTokens the attained service a new program ranks at: programs served fewer tokens
 *     go ahead of it, programs served more go behind
 * @param warm whether the next turn of a program whose reply ended in a tool call is prefilled
 * @param warmTimeout how long a warming prefill may take before it is given up
 * @param warmMaxOthersInFlight a warm goes only to a replica holding at most this many other
 *     reserved requests (0: an idle one)
 * @param warmMaxUncachedTokens a warm goes only where the tracker expects at most this many of its
 *     tokens uncached
 * @param maxPrograms programs remembered at once; the least recently seen are forgotten past it
 * @param idleTtl a program unseen for this long is forgotten
 */
public record ProgramSettings(
    String programHeader,
    String outputTokensHeader,
    String toolCallHeader,
    boolean admission,
    boolean oldestFirst,
    long newProgramTokens,
    boolean warm,
    Duration warmTimeout,
    int warmMaxOthersInFlight,
    int warmMaxUncachedTokens,
    int maxPrograms,
    Duration idleTtl) {

  /** Where the settings live. */
  public static final String PATH = "kvrouter.ingress.programs";

  public ProgramSettings {
    if (newProgramTokens < 0) {
      throw new IllegalArgumentException(
          PATH + ".admission.new-program-tokens must be >= 0, was " + newProgramTokens);
    }
    if (warmMaxOthersInFlight < 0) {
      throw new IllegalArgumentException(
          PATH + ".warm.max-others-in-flight must be >= 0, was " + warmMaxOthersInFlight);
    }
    if (warmMaxUncachedTokens < 1) {
      throw new IllegalArgumentException(
          PATH + ".warm.max-uncached-tokens must be >= 1, was " + warmMaxUncachedTokens);
    }
    if (maxPrograms < 1) {
      throw new IllegalArgumentException(PATH + ".max-programs must be >= 1, was " + maxPrograms);
    }
  }

  private static boolean parseOrder(String order) {
    return switch (order) {
      case "oldest" -> true;
      case "least-attained" -> false;
      default ->
          throw new IllegalArgumentException(
              PATH + ".admission.order must be least-attained or oldest, was '" + order + "'");
    };
  }

  public static ProgramSettings fromConfig(Config config) {
    Config c = config.getConfig(PATH);
    return new ProgramSettings(
        c.getString("headers.program"),
        c.getString("headers.output-tokens"),
        c.getString("headers.tool-call"),
        c.getBoolean("admission.enabled"),
        parseOrder(c.getString("admission.order")),
        c.getLong("admission.new-program-tokens"),
        c.getBoolean("warm.enabled"),
        c.getDuration("warm.timeout"),
        c.getInt("warm.max-others-in-flight"),
        c.getInt("warm.max-uncached-tokens"),
        c.getInt("max-programs"),
        c.getDuration("idle-ttl"));
  }
}
