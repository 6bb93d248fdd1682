package io.kvrouter.testing;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** What the engine doubles share to come back on their ports after a restart. */
public final class ZmqRebind {

  private ZmqRebind() {}

  /**
   * A PUB socket bound to {@code endpoint} again, as a restarted engine binds its configured port:
   * the closed listener may take a moment to let the port go, so the bind is retried every 20 ms,
   * 100 times at most.
   */
  public static ZMQ.Socket pub(ZContext ctx, String endpoint) {
    for (int i = 0; ; i++) {
      ZMQ.Socket s = ctx.createSocket(SocketType.PUB);
      s.setLinger(0);
      try {
        s.bind(endpoint);
        return s;
      } catch (RuntimeException e) {
        ctx.destroySocket(s);
        if (i == 100) {
          throw e;
        }
        try {
          Thread.sleep(20); // retry pacing of a bind
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }
}
