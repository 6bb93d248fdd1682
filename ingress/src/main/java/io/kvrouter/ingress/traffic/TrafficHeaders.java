package io.kvrouter.ingress.traffic;

import io.kvrouter.ingress.tracing.RequestTrace;
import java.util.Locale;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * The request headers traffic management reads, taken from the HTTP request at the edge.
 *
 * @param apiKey the client's API key: {@code Authorization: Bearer <key>} (OpenAI) or {@code
 *     x-api-key} (Anthropic); null when absent
 * @param session the session header's value, or null
 * @param priority the priority header's value (unparsed), or null
 * @param ttftTarget the TTFT target header's value (unparsed), or null
 * @param traceparent W3C {@code traceparent}, or null
 * @param tracestate W3C {@code tracestate}, or null
 */
public record TrafficHeaders(
    String apiKey,
    String session,
    String priority,
    String ttftTarget,
    String traceparent,
    String tracestate) {

  /** A request without any of them. */
  public static final TrafficHeaders NONE = new TrafficHeaders(null, null, null, null, null, null);

  /** The headers of {@code request}, with the names {@code settings} gives. */
  public static TrafficHeaders of(HttpRequest request, TrafficSettings settings) {
    return new TrafficHeaders(
        apiKey(request),
        header(request, settings.sessionHeader()),
        header(request, settings.priorityHeader()),
        header(request, settings.ttftHeader()),
        header(request, RequestTrace.TRACEPARENT),
        header(request, RequestTrace.TRACESTATE));
  }

  private static String apiKey(HttpRequest request) {
    String auth = header(request, "Authorization");
    if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return auth.substring(7).trim();
    }
    return header(request, "x-api-key");
  }

  private static String header(HttpRequest request, String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    return request
        .getHeader(lower)
        .map(h -> h.value().trim())
        .filter(v -> !v.isEmpty())
        .orElse(null);
  }
}
