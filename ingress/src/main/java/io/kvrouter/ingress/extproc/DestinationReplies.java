package io.kvrouter.ingress.extproc;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import java.net.URI;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The reply to a request's headers that sends it to a replica (GIE endpoint-picker protocol):
 * {@code x-gateway-destination-endpoint: host:port} set on the headers, the same value in dynamic
 * metadata {@code envoy.lb}, and the route cache cleared. The reply depends only on the replica's
 * base URL, so each is built once and kept (protobuf messages are immutable and thread-safe), which
 * spares every decision the URL's parse and a dozen builders; at most {@value #MAX_KEPT} are kept,
 * all dropped when that is reached (replicas come and go; a dropped one is simply built again).
 */
final class DestinationReplies {

  /** The header and metadata key of the picked endpoint (GIE endpoint-picker protocol). */
  static final String DESTINATION = "x-gateway-destination-endpoint";

  /** The dynamic metadata namespace of the picked endpoint. */
  static final String METADATA_NAMESPACE = "envoy.lb";

  /** Replies kept at most. */
  static final int MAX_KEPT = 4096;

  private final ConcurrentHashMap<String, ProcessingResponse> byBaseUrl = new ConcurrentHashMap<>();

  /** The headers reply that routes to the replica at {@code baseUrl} ({@code http://host:port}). */
  ProcessingResponse to(String baseUrl) {
    ProcessingResponse reply = byBaseUrl.get(baseUrl);
    if (reply == null) {
      if (byBaseUrl.size() >= MAX_KEPT) {
        byBaseUrl.clear();
      }
      reply = build(baseUrl);
      byBaseUrl.put(baseUrl, reply);
    }
    return reply;
  }

  /** Replies kept now. */
  int kept() {
    return byBaseUrl.size();
  }

  private static ProcessingResponse build(String baseUrl) {
    URI url = URI.create(baseUrl);
    String destination = url.getHost() + ":" + url.getPort();
    HeaderMutation mutation =
        HeaderMutation.newBuilder()
            .addSetHeaders(
                HeaderValueOption.newBuilder()
                    .setHeader(
                        HeaderValue.newBuilder()
                            .setKey(DESTINATION)
                            .setRawValue(ByteString.copyFromUtf8(destination))))
            .build();
    Struct metadata =
        Struct.newBuilder()
            .putFields(
                METADATA_NAMESPACE,
                Value.newBuilder()
                    .setStructValue(
                        Struct.newBuilder()
                            .putFields(
                                DESTINATION,
                                Value.newBuilder().setStringValue(destination).build()))
                    .build())
            .build();
    return ProcessingResponse.newBuilder()
        .setRequestHeaders(
            HeadersResponse.newBuilder()
                .setResponse(
                    CommonResponse.newBuilder()
                        .setHeaderMutation(mutation)
                        .setClearRouteCache(true)))
        .setDynamicMetadata(metadata)
        .build();
  }
}
