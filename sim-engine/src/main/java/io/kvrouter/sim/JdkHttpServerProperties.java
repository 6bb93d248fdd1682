package io.kvrouter.sim;

/**
 * The JDK HTTP server's ({@code com.sun.net.httpserver}) settings that make it behave as vLLM's
 * uvicorn does. The JDK reads its {@code sun.net.httpserver} properties once, when the first server
 * in the JVM is built ({@code sun.net.httpserver.ServerConfig}), so {@link #apply} must run before
 * any server is: {@link SimHttpServer} calls it when it loads, and a test harness that builds its
 * own JDK server in the same JVM calls it before.
 *
 * <ul>
 *   <li>{@code nodelay}: streamed tokens are small writes; without TCP_NODELAY, Nagle's algorithm
 *       and the peer's delayed ACKs hold each one back by tens of milliseconds (uvicorn sets it).
 *   <li>{@code maxIdleConnections}: beyond 200 idle keep-alive connections (the default) the JDK
 *       closes a connection as soon as its response is written, without {@code Connection: close},
 *       so the client's next request on it fails ("header parser received no bytes"); uvicorn keeps
 *       every one until its keep-alive timeout. Lifted, unless the command line sets it.
 * </ul>
 */
public final class JdkHttpServerProperties {

  private JdkHttpServerProperties() {}

  /** Sets the properties; idempotent. */
  public static void apply() {
    System.setProperty("sun.net.httpserver.nodelay", "true");
    if (System.getProperty("sun.net.httpserver.maxIdleConnections") == null) {
      System.setProperty(
          "sun.net.httpserver.maxIdleConnections", String.valueOf(Integer.MAX_VALUE));
    }
  }
}
