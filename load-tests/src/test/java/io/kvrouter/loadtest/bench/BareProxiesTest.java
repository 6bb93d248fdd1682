package io.kvrouter.loadtest.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvrouter.testing.FreePorts;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The two bare proxies {@code overhead.sh} measures beside nginx relay a request and its streamed
 * answer as they are, chunk by chunk: the first chunk reaches the client while the upstream is
 * still generating, so their figures are a stream's, not a buffered body's.
 */
class BareProxiesTest {

  private static final String BODY =
      "{\"model\":\"fake-model\",\"prompt\":\"hello\",\"max_tokens\":4,\"stream\":true}";

  @Test
  void nettyRelay_relaysTheRequestAndStreamsTheAnswerChunkByChunk() throws Exception {
    try (FakeOpenAiServer upstream =
        new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 4, 300, 1)) {
      int port = FreePorts.one();
      try (NettyRelayProxy relay = NettyRelayProxy.start("127.0.0.1", port, upstream.base(), 1)) {
        relaysAndStreams(upstream, port);
      }
    }
  }

  @Test
  void barePekkoProxy_relaysTheRequestAndStreamsTheAnswerChunkByChunk() throws Exception {
    try (FakeOpenAiServer upstream =
        new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 4, 300, 1)) {
      int port = FreePorts.one();
      try (BarePekkoProxy proxy =
          BarePekkoProxy.start("127.0.0.1", port, upstream.base().toString())) {
        relaysAndStreams(upstream, port);
      }
    }
  }

  @Test
  void barePekkoProxyWithANettyClient_relaysTheRequestAndStreamsTheAnswerChunkByChunk()
      throws Exception {
    try (FakeOpenAiServer upstream =
        new FakeOpenAiServer(FakeOpenAiServer.Mode.STREAM, 4, 300, 1)) {
      int port = FreePorts.one();
      try (BarePekkoProxy proxy =
          BarePekkoProxy.start("127.0.0.1", port, upstream.base().toString(), true)) {
        relaysAndStreams(upstream, port);
      }
    }
  }

  private static void relaysAndStreams(FakeOpenAiServer upstream, int port) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    HttpResponse<InputStream> response =
        client.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(BODY))
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, response.statusCode());
    List<String> data = new ArrayList<>();
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      String line;
      boolean firstSeen = false;
      while ((line = in.readLine()) != null) {
        if (!line.startsWith("data: ")) {
          continue;
        }
        if (!firstSeen) {
          firstSeen = true;
          // The upstream sends three more chunks, 300 ms apart, before it completes.
          assertEquals(0, upstream.completed(), "first chunk relayed before the upstream finished");
        }
        data.add(line);
      }
    }
    assertEquals(List.of(BODY), upstream.bodies());
    assertEquals(6, data.size(), "4 text chunks, usage, [DONE]: " + data);
    assertTrue(data.get(0).contains("\"w0 \""), data.get(0));
    assertEquals("data: [DONE]", data.get(5));
    assertEquals(1, upstream.completed());
  }
}
