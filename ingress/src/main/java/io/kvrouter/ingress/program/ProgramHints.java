package io.kvrouter.ingress.program;

import io.kvrouter.ingress.api.ApiError;
import io.kvrouter.ingress.api.ApiException;
import java.util.Locale;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * What a client may say of its program beyond what the API bodies carry, read from the headers
 * {@link ProgramSettings} names.
 *
 * @param program the program header's value (the program when nothing else names it), or null
 * @param outputTokens how many tokens the client expects this turn to generate, or null
 * @param toolCall whether the client says this turn ends in a tool call (true: warm its next turn
 *     whatever the reply looks like; false: never), or null to judge by the reply
 */
public record ProgramHints(String program, Integer outputTokens, Boolean toolCall) {

  /** No hints. */
  public static final ProgramHints NONE = new ProgramHints(null, null, null);

  /**
   * The hints of {@code request}.
   *
   * @throws ApiException 400 for an output length that is not a positive integer or a tool-call
   *     hint that is not a boolean
   */
  public static ProgramHints of(HttpRequest request, ProgramSettings settings) {
    String program = header(request, settings.programHeader());
    String output = header(request, settings.outputTokensHeader());
    String toolCall = header(request, settings.toolCallHeader());
    if (program == null && output == null && toolCall == null) {
      return NONE;
    }
    return new ProgramHints(
        program,
        output == null ? null : positive(output, settings.outputTokensHeader()),
        toolCall == null ? null : bool(toolCall, settings.toolCallHeader()));
  }

  private static int positive(String value, String header) {
    try {
      int v = Integer.parseInt(value);
      if (v > 0) {
        return v;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw invalid(header, "a positive integer (tokens)", value);
  }

  private static boolean bool(String value, String header) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "true", "1", "yes" -> true;
      case "false", "0", "no" -> false;
      default -> throw invalid(header, "true or false", value);
    };
  }

  private static ApiException invalid(String header, String what, String value) {
    return new ApiException(
        ApiError.invalid(
            "The " + header + " header must be " + what + ", was '" + value + "'.",
            null,
            "invalid_header"));
  }

  private static String header(HttpRequest request, String name) {
    return request
        .getHeader(name.toLowerCase(Locale.ROOT))
        .map(h -> h.value().trim())
        .filter(v -> !v.isEmpty())
        .orElse(null);
  }
}
