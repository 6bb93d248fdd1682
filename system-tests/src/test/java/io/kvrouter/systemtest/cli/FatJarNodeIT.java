package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/**
 * Starts a node the way users do, {@code java -jar kvrouter-all.jar agent ...}, and sees it join.
 */
class FatJarNodeIT {

  static Path fatJar() {
    Path jar = Path.of(System.getProperty("kvrouter.fatjar", "target/kvrouter-all.jar"));
    assertThat(jar).as("fat jar built by the package phase").exists();
    return jar;
  }

  static Process startJava(Path log, String... args) throws Exception {
    return startJar(NodeClassArchive.javaCommand(fatJar()), fatJar(), log, args);
  }

  /**
   * Starts {@code java -jar jar args} with the {@code java} command given, output to {@code log}.
   */
  static Process startJar(List<String> java, Path jar, Path log, String... args) throws Exception {
    List<String> command = new ArrayList<>(java);
    command.add("-jar");
    command.add(jar.toString());
    command.addAll(List.of(args));
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
  }

  @Test
  void agentProcessFromFatJar_joinsTheClusterFormedByTheTest() throws Exception {
    ActorSystem<Void> seed =
        NodeBootstrap.start(
            NodeSettings.dev(List.of(NodeSettings.ROLE_INGRESS), List.of()), Map.of());
    Path log = Files.createTempFile("kvrouter-agent", ".log");
    Process agent = null;
    try {
      String seedAddress = Cluster.get(seed).selfMember().address().toString();
      agent =
          startJava(
              log,
              "agent",
              "--profile",
              "dev",
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--seed-nodes",
              seedAddress,
              "--sim",
              "1",
              "--sim-http-base",
              "0",
              "--sim-zmq-base",
              "0");
      Process running = agent;
      ActorTestKit kit = ActorTestKit.create(seed);
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(60),
              () -> {
                assertThat(running.isAlive())
                    .as("agent process alive; its log:%n%s", read(log))
                    .isTrue();
                assertThat(members(seed))
                    .anyMatch(m -> m.hasRole("agent") && m.status() == MemberStatus.up());
                return null;
              });
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(30),
              () -> {
                assertThat(read(log)).contains("kvrouter node up:");
                return null;
              });
    } finally {
      if (agent != null) {
        agent.destroyForcibly().waitFor();
      }
      seed.terminate();
      seed.getWhenTerminated().toCompletableFuture().join();
    }
  }

  private static Iterable<Member> members(ActorSystem<?> system) {
    return () ->
        StreamSupport.stream(Cluster.get(system).state().getMembers().spliterator(), false)
            .iterator();
  }

  private static String read(Path log) {
    try {
      return Files.readString(log);
    } catch (Exception e) {
      return "(unreadable: " + e + ")";
    }
  }
}
