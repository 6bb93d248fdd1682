package io.kvrouter.ingress.http;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/** An engine on loopback that answers each path with a scripted status, type and body. */
final class ScriptedEngine implements AutoCloseable {

  record Answer(int status, String contentType, String body) {}

  record Seen(String path, String body) {}

  private final HttpServer server;
  final List<Seen> seen = new CopyOnWriteArrayList<>();
  final Map<String, Answer> answers = new ConcurrentHashMap<>();

  ScriptedEngine() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext(
        "/",
        ex -> {
          String path = ex.getRequestURI().getPath();
          seen.add(
              new Seen(
                  path, new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)));
          Answer a = answers.getOrDefault(path, new Answer(404, "application/json", "{}"));
          byte[] bytes = a.body().getBytes(StandardCharsets.UTF_8);
          ex.getResponseHeaders().add("Content-Type", a.contentType());
          ex.sendResponseHeaders(a.status(), bytes.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
          }
        });
    server.start();
  }

  ScriptedEngine answer(String path, int status, String contentType, String body) {
    answers.put(path, new Answer(status, contentType, body));
    return this;
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
