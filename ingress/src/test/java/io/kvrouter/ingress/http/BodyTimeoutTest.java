package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
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
      String response = readResponse(socket.getInputStream());
      assertThat(response).startsWith("HTTP/1.1 400").contains("\"body_timeout\"");
      assertThat(ingress.router.queries).isEmpty();
    }
  }

  /** Reads the status line, headers and the body announced by Content-Length. */
  private static String readResponse(InputStream in) throws Exception {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        return head.toString();
      }
      head.append((char) b);
    }
    int length = 0;
    for (String line : head.toString().split("\r\n")) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }
}
