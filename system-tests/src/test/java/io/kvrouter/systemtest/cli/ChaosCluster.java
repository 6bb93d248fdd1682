package io.kvrouter.systemtest.cli;

import io.kvrouter.testing.FreePorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The processes of a chaos run, each at a fixed address so a restart comes back where it was: two
 * ingresses (127.0.0.2, .3), two agents (127.0.0.6, .7), each watching one simulated engine in a
 * process of its own (127.0.0.4, distinct ports, KV events and replay over ZMQ). Every cluster node
 * gets the same seed list (both ingresses and the first agent), so a restarted node joins whoever
 * is up. {@link #kill} is SIGKILL; {@link #start} starts the node again with the same command.
 *
 * <p>Like systemd's {@code Restart=on-failure} or the kubelet, the cluster also starts again a node
 * that exited on its own with a non-zero status (a node the cluster downed exits 1: {@code
 * ExitStatus}), unless the schedule is holding it down; {@link #selfExits} lists each such exit. A
 * 600 s run found the need: an agent downed by the split brain resolver shut down for good, and its
 * engine had no agent for the rest of the run.
 */
final class ChaosCluster implements AutoCloseable {

  static final String MODEL = "kvrouter-demo";

  /** One node: its command line and its current process. */
  static final class Node {
    final String name;
    final String host;
    final int httpPort;
    final List<String> args;
    volatile Process process;
    int incarnation;

    /** True from a kill until the schedule starts the node again: not for the supervisor. */
    volatile boolean held;

    Node(String name, String host, int httpPort, List<String> args) {
      this.name = name;
      this.host = host;
      this.httpPort = httpPort;
      this.args = args;
    }

    String url() {
      return "http://" + host + ":" + httpPort;
    }
  }

  final List<Node> engines = new ArrayList<>();
  final List<Node> agents = new ArrayList<>();
  final List<Node> ingresses = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();
  private final List<SelfExit> selfExits = new CopyOnWriteArrayList<>();
  private volatile LongSupplier clock = System::nanoTime;
  private final ScheduledExecutorService supervisor =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "chaos-supervisor");
            t.setDaemon(true);
            return t;
          });

  /**
   * @param config HOCON given to every cluster node
   * @param speedup the engines' speed-up over real time
   */
  ChaosCluster(String config, double speedup) throws Exception {
    Path conf = Files.createTempFile("kvrouter-chaos", ".conf");
    Files.writeString(conf, config);
    String[] ingressHosts = {"127.0.0.2", "127.0.0.3"};
    String[] agentHosts = {"127.0.0.6", "127.0.0.7"};
    String engineHost = "127.0.0.4";
    int[] ingressPorts = {FreePorts.one(ingressHosts[0]), FreePorts.one(ingressHosts[1])};
    int[] agentPorts = {FreePorts.one(agentHosts[0]), FreePorts.one(agentHosts[1])};
    String seeds =
        String.join(
            ",",
            "pekko://kvrouter@" + ingressHosts[0] + ":" + ingressPorts[0],
            "pekko://kvrouter@" + ingressHosts[1] + ":" + ingressPorts[1],
            "pekko://kvrouter@" + agentHosts[0] + ":" + agentPorts[0]);
    for (int i = 0; i < 2; i++) {
      int http = FreePorts.one(engineHost);
      String events = "tcp://" + engineHost + ":" + FreePorts.one(engineHost);
      String replay = "tcp://" + engineHost + ":" + FreePorts.one(engineHost);
      engines.add(
          new Node(
              "engine-" + i,
              engineHost,
              http,
              List.of(
                  "sim-engine",
                  "--host",
                  engineHost,
                  "--port",
                  "" + http,
                  "--model",
                  MODEL,
                  "--kv-events",
                  events,
                  "--replay",
                  replay,
                  "--speedup",
                  "" + speedup)));
      agents.add(
          new Node(
              "agent-" + i,
              agentHosts[i],
              -1,
              List.of(
                  "agent",
                  "--profile",
                  "dev",
                  "--config",
                  conf.toString(),
                  "--host",
                  agentHosts[i],
                  "--port",
                  "" + agentPorts[i],
                  "--seed-nodes",
                  seeds,
                  "--engine-url",
                  "http://" + engineHost + ":" + http,
                  "--kv-events",
                  events,
                  "--replay",
                  replay,
                  "--replica-id",
                  "engine-" + i,
                  "--model",
                  MODEL)));
    }
    for (int i = 0; i < 2; i++) {
      int http = FreePorts.one(ingressHosts[i]);
      ingresses.add(
          new Node(
              "ingress-" + i,
              ingressHosts[i],
              http,
              List.of(
                  "ingress",
                  "--profile",
                  "dev",
                  "--config",
                  conf.toString(),
                  "--host",
                  ingressHosts[i],
                  "--port",
                  "" + ingressPorts[i],
                  "--seed-nodes",
                  seeds,
                  "--http-host",
                  ingressHosts[i],
                  "--http-port",
                  "" + http)));
    }
  }

  /** Every node, engines first. */
  List<Node> all() {
    List<Node> out = new ArrayList<>(engines);
    out.addAll(ingresses);
    out.addAll(agents);
    return out;
  }

  /** Starts (or starts again) the node's process. */
  synchronized void start(Node node) throws Exception {
    node.incarnation++;
    node.held = false;
    Path log = Files.createTempFile("kvrouter-chaos-" + node.name + "-" + node.incarnation, ".log");
    logs.add(log);
    node.process = FatJarNodeIT.startJava(log, node.args.toArray(String[]::new));
  }

  /** SIGKILL, and waits for the process to be gone; the node stays down until {@link #start}. */
  synchronized void kill(Node node) throws Exception {
    node.held = true;
    node.process.destroyForcibly().waitFor();
  }

  /**
   * A node that exited on its own with a non-zero status: which, the status, and when the
   * supervisor saw it gone (on the clock given to {@link #supervise}; at most half a second after
   * the exit).
   */
  record SelfExit(Node node, int incarnation, int status, long seenNanos) {
    @Override
    public String toString() {
      return String.format(
          "%s (incarnation %d) exited with status %d at %.1f s",
          node.name, incarnation, status, seenNanos / 1e9);
    }
  }

  /**
   * Starts the supervisor: every half second, a node that exited non-zero is started again.
   *
   * @param clock the run's clock, in nanoseconds, for {@link SelfExit#seenNanos}
   */
  void supervise(LongSupplier clock) {
    this.clock = clock;
    supervisor.scheduleWithFixedDelay(this::restartFailed, 500, 500, TimeUnit.MILLISECONDS);
  }

  /** Nodes that exited on their own and were started again. */
  List<SelfExit> selfExits() {
    return List.copyOf(selfExits);
  }

  private synchronized void restartFailed() {
    for (Node n : all()) {
      if (n.held || n.process == null || n.process.isAlive() || n.process.exitValue() == 0) {
        continue;
      }
      SelfExit exit = new SelfExit(n, n.incarnation, n.process.exitValue(), clock.getAsLong());
      System.out.println("chaos: " + exit + "; started again, as a supervisor would");
      selfExits.add(exit);
      try {
        start(n);
      } catch (Exception e) {
        throw new IllegalStateException(n.name + " could not be started again", e);
      }
    }
  }

  /** The tail of every log, for assertion messages. */
  String logs() {
    return NodeProcesses.tails(logs, 2000);
  }

  @Override
  public void close() throws Exception {
    supervisor.shutdownNow();
    supervisor.awaitTermination(10, TimeUnit.SECONDS);
    for (Node n : all()) {
      if (n.process != null) {
        n.process.destroyForcibly().waitFor();
      }
    }
  }
}
