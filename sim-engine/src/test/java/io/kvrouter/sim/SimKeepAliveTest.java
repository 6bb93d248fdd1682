package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A client that keeps many keep-alive connections to the simulated engine (the ingress's pool after
 * a loaded run) can reuse every one of them, as it can with vLLM's uvicorn: the JDK server's
 * default closes each connection beyond 200 idle ones right after its response.
 */
class SimKeepAliveTest {

  private static final int CONNECTIONS = 260;
  private static final Pattern CONTENT_LENGTH =
      Pattern.compile("(?i)\\r\\ncontent-length: *(\\d+)\\r\\n");

  @Test
  void moreThan200IdleKeepAliveConnections_allServeTheirNextRequest() throws Exception {
    try (SimEngine engine =
        SimEngine.start(
            SimEngineSettings.loopback()
                .withModel("m")
                .withEndpoints(0, null, null)
                .withEngine(SimEngineConfig.defaults().withNumBlocks(16)))) {
      int port = java.net.URI.create(engine.baseUrl()).getPort();
      List<Socket> sockets = new ArrayList<>();
      try {
        for (int i = 0; i < CONNECTIONS; i++) {
          Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
          s.setSoTimeout(5_000);
          sockets.add(s);
          assertThat(get(s)).as("first request on connection %d", i).startsWith("HTTP/1.1 200");
        }
        List<String> failed = new ArrayList<>();
        for (int i = 0; i < CONNECTIONS; i++) {
          try {
            String status = get(sockets.get(i));
            if (!status.startsWith("HTTP/1.1 200")) {
              failed.add(i + ": " + status);
            }
          } catch (IOException e) {
            failed.add(i + ": " + e);
          }
        }
        assertThat(failed).as("reused connections that failed").isEmpty();
      } finally {
        for (Socket s : sockets) {
          s.close();
        }
      }
    }
  }

  /** Sends GET /v1/models on {@code s} and reads the whole answer; returns its status line. */
  private static String get(Socket s) throws IOException {
    s.getOutputStream()
        .write(
            "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    InputStream in = s.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        return "closed after " + head.size() + " bytes";
      }
      head.write(b);
    }
    String headers = head.toString(StandardCharsets.US_ASCII);
    Matcher m = CONTENT_LENGTH.matcher(headers);
    assertThat(m.find()).as(headers).isTrue();
    int length = Integer.parseInt(m.group(1));
    assertThat(in.readNBytes(length)).hasSize(length);
    return headers.substring(0, headers.indexOf("\r\n"));
  }
}
