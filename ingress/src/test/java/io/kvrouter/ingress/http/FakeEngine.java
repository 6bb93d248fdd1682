package io.kvrouter.ingress.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/** A scripted OpenAI-compatible engine on loopback for proxy tests. */
final class FakeEngine implements AutoCloseable {

  enum Mode {
    OK,
    FAIL_500,
    CLOSE,
    /** Streams two chunks, then drops the connection. */
    BREAK_MID_STREAM,
    /**
     * Streams a chunk every 20 ms for up to 30 s, like a long generation, until the reader goes.
     */
    DRIP
  }

  private final HttpServer server;
  final List<String> bodies = new CopyOnWriteArrayList<>();
  final CountDownLatch release = new CountDownLatch(1);
  volatile Mode mode;

  FakeEngine(Mode mode) throws IOException {
    this.mode = mode;
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/", this::handle);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void handle(HttpExchange exchange) throws IOException {
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    bodies.add(body);
    boolean stream = body.contains("\"stream\":true");
    boolean chat = exchange.getRequestURI().getPath().contains("chat");
    if (mode == Mode.FAIL_500) {
      byte[] err = "{\"error\":{\"message\":\"boom\"}}".getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(500, err.length);
      exchange.getResponseBody().write(err);
      exchange.close();
      return;
    }
    if (mode == Mode.CLOSE) {
      exchange.getResponseBody().close();
      exchange.close();
      return;
    }
    if (!stream) {
      String json =
          chat
              ? "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello world\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":0}}}"
              : "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"hello world\",\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":0}}}";
      byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, bytes.length);
      exchange.getResponseBody().write(bytes);
      exchange.close();
      return;
    }
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    String[] words = {"hello", " world"};
    for (int i = 0; i < words.length; i++) {
      String chunk =
          chat
              ? "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\""
                  + words[i]
                  + "\"},\"finish_reason\":null}]}"
              : "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\""
                  + words[i]
                  + "\",\"finish_reason\":null}]}";
      out.write(("data: " + chunk + "\n\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      if (mode == Mode.DRIP) {
        drip(out, exchange);
        return;
      }
      if (mode == Mode.BREAK_MID_STREAM && i == 1) {
        // Abort the connection without the terminating chunk.
        throw new IOException("engine died");
      }
    }
    String finish =
        chat
            ? "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}"
            : "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"stop\"}]}";
    out.write(("data: " + finish + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.write(
        ("data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":3}}}\n\n")
            .getBytes(StandardCharsets.UTF_8));
    out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
    out.close();
    exchange.close();
  }

  private void drip(OutputStream out, HttpExchange exchange) {
    try {
      for (int n = 0; n < 1500 && release.getCount() > 0; n++) {
        out.write(
            "data: {\"choices\":[{\"index\":0,\"text\":\" more\"}]}\n\n"
                .getBytes(StandardCharsets.UTF_8));
        out.flush();
        release.await(20, TimeUnit.MILLISECONDS);
      }
    } catch (IOException | InterruptedException gone) {
      // the reader went away: stop generating, as an engine aborts a cancelled request
    } finally {
      exchange.close();
    }
  }

  @Override
  public void close() {
    release.countDown();
    server.stop(0);
  }
}
