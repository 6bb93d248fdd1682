package io.kvrouter.ingress.extproc;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import org.junit.jupiter.api.Test;

/**
 * The headers reply of a decision names the replica as GIE's protocol asks (header and {@code
 * envoy.lb} metadata, route cache cleared), is built once per base URL, and stays right after the
 * kept replies are dropped.
 */
class DestinationRepliesTest {

  private final DestinationReplies replies = new DestinationReplies();

  @Test
  void theReply_namesHostAndPort_inTheHeaderAndTheLbMetadata_andClearsTheRouteCache() {
    ProcessingResponse reply = replies.to("http://10.0.0.7:8000");

    var common = reply.getRequestHeaders().getResponse();
    assertThat(common.getClearRouteCache()).isTrue();
    assertThat(common.getHeaderMutation().getSetHeadersList()).hasSize(1);
    var header = common.getHeaderMutation().getSetHeaders(0).getHeader();
    assertThat(header.getKey()).isEqualTo("x-gateway-destination-endpoint");
    assertThat(destination(reply)).isEqualTo("10.0.0.7:8000");
    assertThat(
            reply
                .getDynamicMetadata()
                .getFieldsOrThrow("envoy.lb")
                .getStructValue()
                .getFieldsOrThrow("x-gateway-destination-endpoint")
                .getStringValue())
        .isEqualTo("10.0.0.7:8000");
  }

  @Test
  void aBaseUrl_isBuiltOnce() {
    assertThat(replies.to("http://10.0.0.7:8000")).isSameAs(replies.to("http://10.0.0.7:8000"));
    assertThat(replies.to("http://10.0.0.8:8000")).isNotEqualTo(replies.to("http://10.0.0.7:8000"));
  }

  @Test
  void pastTheLimit_theKeptRepliesAreDropped_andEachIsStillRight() {
    for (int i = 0; i <= DestinationReplies.MAX_KEPT; i++) {
      replies.to("http://10.0." + (i / 250) + "." + (i % 250) + ":8000");
    }
    assertThat(destination(replies.to("http://10.1.2.3:9000"))).isEqualTo("10.1.2.3:9000");
    assertThat(replies.kept()).isLessThanOrEqualTo(DestinationReplies.MAX_KEPT);
  }

  /** The value of the first header a headers reply sets (the destination, in the picker's). */
  static String destination(ProcessingResponse reply) {
    return reply
        .getRequestHeaders()
        .getResponse()
        .getHeaderMutation()
        .getSetHeaders(0)
        .getHeader()
        .getRawValue()
        .toStringUtf8();
  }
}
