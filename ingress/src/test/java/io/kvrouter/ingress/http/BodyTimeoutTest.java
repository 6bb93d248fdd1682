package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Only the request body's own read timeout is the client's fault (400 {@code body_timeout}); a
 * client that sends half its body and stalls gets it, and nothing reaches the router.
 */
class BodyTimeoutTest {

  @Test
  void aBodyThatStopsHalfway_gets400BodyTimeout_andNeverReachesTheRouter() throws Exception {
    try (ValidatingIngress ingress =
            new ValidatingIngress(64, "8k", List.of(), "body-read-timeout = 300ms");
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), ingress.port())) {
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  + "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n"
                  + "{\"model\":\"tiny\",")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String response = RawHttp.readResponse(socket.getInputStream());
      assertThat(response).startsWith("HTTP/1.1 400").contains("\"body_timeout\"");
      assertThat(ingress.router.queries).isEmpty();
    }
  }
}
