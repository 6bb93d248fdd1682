package io.kvrouter.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for tests that start nodes in other processes and must name their ports up front.
 *
 * <p>A port the kernel hands out for {@code bind(0)} comes from the ephemeral range, the same range
 * every outbound connection on the machine draws its local port from; between the probe and the
 * node's own bind, a cluster connection elsewhere can take it ("Address already in use"). Ports
 * here are drawn below that range (Linux's {@code /proc/sys/net/ipv4/ip_local_port_range}, 32768 by
 * default), where only listeners bind, are probed free on the given host, and are never handed out
 * twice in one test JVM.
 */
public final class FreePorts {

  private static final int LOWEST = 10_000;
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private FreePorts() {}

  /** One free port on loopback 127.0.0.1. */
  public static int one() {
    return run("127.0.0.1", 1);
  }

  /** One free port on {@code host}. */
  public static int one(String host) {
    return run(host, 1);
  }

  /** The first of {@code n} consecutive ports free on {@code host}. */
  public static synchronized int run(String host, int n) {
    int top = ephemeralLow() - n;
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 200; attempt++) {
      int base = LOWEST + random.nextInt(top - LOWEST);
      if (allFree(host, base, n)) {
        for (int p = base; p < base + n; p++) {
          HANDED_OUT.add(p);
        }
        return base;
      }
    }
    throw new IllegalStateException("no run of " + n + " free ports on " + host);
  }

  private static boolean allFree(String host, int base, int n) {
    for (int p = base; p < base + n; p++) {
      if (HANDED_OUT.contains(p) || !bindable(host, p)) {
        return false;
      }
    }
    return true;
  }

  private static boolean bindable(String host, int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new java.net.InetSocketAddress(InetAddress.getByName(host), port), 1);
      return true;
    } catch (IOException taken) {
      return false;
    }
  }

  /** The lowest ephemeral port, 32768 where the kernel does not say. */
  static int ephemeralLow() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      int low = Integer.parseInt(range.split("\\s+")[0]);
      return low > LOWEST + 1000 ? low : 32_768;
    } catch (IOException | RuntimeException unreadable) {
      return 32_768;
    }
  }
}
