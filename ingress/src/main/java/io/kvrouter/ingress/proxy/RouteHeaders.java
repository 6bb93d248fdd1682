package io.kvrouter.ingress.proxy;

import io.kvrouter.ingress.pd.DecodeHop;
import io.kvrouter.ingress.routing.RouteOutcome;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * The response headers that say where a request went, so that a client, a load test or an operator
 * sees each routing decision without the ingress's logs (llm-d's endpoint picker names its pick in
 * {@code x-gateway-destination-endpoint} the same way):
 *
 * <ul>
 *   <li>{@value #REPLICA}: the replica that answered (the decode replica of a disaggregated
 *       request);
 *   <li>{@value #ENDPOINT}: the host and port the request was proxied to;
 *   <li>{@value #PREDICTED_CACHED}: the prompt tokens the router predicted cached there;
 *   <li>{@value #HOP}: how the prompt was prefilled ({@link DecodeHop.Path#label()});
 *   <li>{@value #PREFILL_REPLICA}: the replica that prefilled it, after a prefill hop only.
 * </ul>
 */
final class RouteHeaders {

  static final String REPLICA = "x-kvrouter-replica";
  static final String ENDPOINT = "x-kvrouter-endpoint";
  static final String PREDICTED_CACHED = "x-kvrouter-predicted-cached-tokens";
  static final String HOP = "x-kvrouter-hop";
  static final String PREFILL_REPLICA = "x-kvrouter-prefill-replica";

  private RouteHeaders() {}

  /** The headers for a request placed as {@code routed} that went there by {@code hop}. */
  static List<HttpHeader> of(RouteOutcome.Routed routed, DecodeHop hop) {
    List<HttpHeader> headers = new ArrayList<>(5);
    headers.add(RawHeader.create(REPLICA, routed.target().replicaId()));
    headers.add(RawHeader.create(ENDPOINT, endpoint(routed.target().baseUrl())));
    headers.add(
        RawHeader.create(
            PREDICTED_CACHED, Integer.toString(Math.max(0, routed.predictedCachedTokens()))));
    headers.add(RawHeader.create(HOP, hop.path().label()));
    if (hop.prefillReplica() != null) {
      headers.add(RawHeader.create(PREFILL_REPLICA, hop.prefillReplica()));
    }
    return headers;
  }

  /**
   * The {@code host:port} of an engine's base URL ({@code http://10.0.0.7:8000/x} gives {@code
   * 10.0.0.7:8000}); the scheme's default port when the URL names none. User information is left
   * out, so that no credential reaches a client. String operations only: parsing a URL per request
   * would cost more than the rest of this.
   */
  static String endpoint(String baseUrl) {
    int start = baseUrl.indexOf("://");
    start = start < 0 ? 0 : start + 3;
    int end = baseUrl.indexOf('/', start);
    String authority = end < 0 ? baseUrl.substring(start) : baseUrl.substring(start, end);
    authority = authority.substring(authority.lastIndexOf('@') + 1);
    if (authority.lastIndexOf(':') > authority.lastIndexOf(']')) {
      return authority;
    }
    return authority + (baseUrl.startsWith("https:") ? ":443" : ":80");
  }
}
