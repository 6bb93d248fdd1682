package io.kvrouter.ingress.program;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * An engine on a loopback socket that speaks just enough HTTP/1.1 (Content-Length bodies,
 * keep-alive) to answer scripted paths, and that can hold a path's requests unanswered: a held
 * request is answered only when {@link #release} is called, and the engine records when its client
 * closed the connection meanwhile ({@link #closedWhileHeld}), as vLLM notices a disconnect and
 * aborts the request.
 */
final class LoopbackEngine implements AutoCloseable {

  record Seen(String path, String body) {}

  record Answer(String contentType, String body) {}

  private final ServerSocket server;
  final List<Seen> seen = new CopyOnWriteArrayList<>();
  final Map<String, Answer> answers = new ConcurrentHashMap<>();
  final List<String> held = new CopyOnWriteArrayList<>();

  /** Counted down when a held request's connection is closed by the client. */
  final CountDownLatch closedWhileHeld = new CountDownLatch(1);

  private volatile CountDownLatch hold;

  LoopbackEngine() throws IOException {
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "loopback-engine");
    accept.setDaemon(true);
    accept.start();
  }

  LoopbackEngine answer(String path, String contentType, String body) {
    answers.put(path, new Answer(contentType, body));
    return this;
  }

  /** Requests to {@code path} wait unanswered until {@link #release}. */
  LoopbackEngine holding(String path) {
    held.add(path);
    hold = new CountDownLatch(1);
    return this;
  }

  void release() {
    hold.countDown();
  }

  String url() {
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  List<Seen> seen(String path) {
    return seen.stream().filter(s -> s.path().equals(path)).toList();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        Thread t = new Thread(() -> serve(s), "loopback-engine-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException closed) {
        return;
      }
    }
  }

  private void serve(Socket socket) {
    try (socket;
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream()) {
      while (true) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        String[] lines = head.split("\r\n");
        String path = lines[0].split(" ")[1];
        int length = 0;
        for (String line : lines) {
          if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
            length = Integer.parseInt(line.substring(15).trim());
          }
        }
        String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
        seen.add(new Seen(path, body));
        if (held.contains(path)) {
          // The client closing the connection is the only thing that can come in now.
          socket.setSoTimeout(0);
          Thread wait =
              new Thread(
                  () -> {
                    try {
                      if (in.read() < 0) {
                        closedWhileHeld.countDown();
                      }
                    } catch (IOException e) {
                      closedWhileHeld.countDown();
                    }
                  });
          wait.setDaemon(true);
          wait.start();
          hold.await();
        }
        Answer a = answers.getOrDefault(path, new Answer("application/json", "{}"));
        byte[] bytes = a.body().getBytes(StandardCharsets.UTF_8);
        out.write(
            ("HTTP/1.1 200 OK\r\nContent-Type: "
                    + a.contentType()
                    + "\r\nContent-Length: "
                    + bytes.length
                    + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.flush();
      }
    } catch (IOException | InterruptedException | RuntimeException e) {
      // the client went away
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      matched = (b == '\r' || b == '\n') ? matched + 1 : 0;
      if (matched == 4) {
        return head.toString(StandardCharsets.US_ASCII);
      }
    }
    return null;
  }

  @Override
  public void close() throws IOException {
    if (hold != null) {
      hold.countDown();
    }
    server.close();
  }
}
