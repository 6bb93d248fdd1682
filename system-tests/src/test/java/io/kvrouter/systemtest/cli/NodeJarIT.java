package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FileDescriptor;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorProto;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kvrouter.systemtest.testing.ExtProcStream;
import io.kvrouter.testing.FreePorts;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The node jar, {@code kvrouter-node.jar}, which the production image runs: it holds no lab, bench,
 * baseline, simulator or developer-command class, no dependency's test suite, natives for
 * linux-x86_64 alone and, of Envoy's API, the descriptor closure of the ext_proc service; and it
 * runs: an ingress and an agent started from it as processes, over a simulated engine started from
 * the full jar, answer a chat completion, and the ingress's endpoint picker answers ext_proc as
 * Envoy speaks it.
 */
class NodeJarIT {

  /** Packages of the lab, the simulated engine and the developer's commands. */
  private static final List<String> FORBIDDEN_PACKAGES =
      List.of("io/kvrouter/loadtest/", "io/kvrouter/sim/", "io/kvrouter/cli/dev/");

  /** Words (of package and class names, split at case changes) no kvrouter class may carry. */
  private static final Set<String> FORBIDDEN_WORDS =
      Set.of(
          "lab",
          "bench",
          "baseline",
          "baselines",
          "sim",
          "simulated",
          "simulator",
          "demo",
          "soak",
          "loadtest");

  /** Test suites and test frameworks: a dependency's tests, or a test-scope library leaked. */
  private static final List<String> TEST_SUITES =
      List.of(
          "dev/cel/expr/conformance/",
          "cel/expr/conformance/",
          "org/junit/",
          "org/assertj/",
          "org/opentest4j/",
          "net/jqwik/",
          "org/apache/pekko/testkit/",
          "org/apache/pekko/actor/testkit/");

  /** Path tokens that name a platform other than the image's (linux-x86_64). */
  private static final Set<String> FOREIGN_PLATFORMS =
      Set.of(
          "osx",
          "darwin",
          "mac",
          "macos",
          "win",
          "win32",
          "windows",
          "aix",
          "sunos",
          "solaris",
          "freebsd",
          "openbsd",
          "dragonflybsd",
          "aarch",
          "aarch64",
          "arm",
          "armel",
          "arm64",
          "ppc",
          "ppc64",
          "ppc64le",
          "s390x",
          "riscv64",
          "mips64el",
          "loongarch64",
          "i386",
          "sparc",
          "sparcv9");

  private final List<Process> processes = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();
  private ManagedChannel channel;
  private ActorTestKit kit;

  static Path nodeJar() {
    Path jar = Path.of(System.getProperty("kvrouter.nodejar", "target/kvrouter-node.jar"));
    assertThat(jar).as("node jar built by the package phase").exists();
    return jar;
  }

  static List<String> entries(Path jar) throws Exception {
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      return zip.stream().map(ZipEntry::getName).toList();
    }
  }

  @AfterEach
  void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow();
    }
    for (Process p : processes) {
      p.destroyForcibly().waitFor();
    }
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  @Test
  void holdsNoLabBenchBaselineSimulatorOrDeveloperClass_andNoTestSuite() throws Exception {
    List<String> entries = entries(nodeJar());
    assertThat(entries).as("the node's own classes").contains("io/kvrouter/cli/NodeMain.class");
    List<String> forbidden = new ArrayList<>();
    for (String e : entries) {
      if (FORBIDDEN_PACKAGES.stream().anyMatch(e::startsWith)
          || TEST_SUITES.stream().anyMatch(e::startsWith)
          || (e.startsWith("io/kvrouter/") && e.endsWith(".class") && hasForbiddenWord(e))) {
        forbidden.add(e);
      }
    }
    assertThat(forbidden).as("lab, bench, baseline, simulator, dev or test classes").isEmpty();
  }

  /** {@code io/kvrouter/loadtest/bench/BenchRequest$1.class}: io, kvrouter, ..., bench, request. */
  static boolean hasForbiddenWord(String classEntry) {
    String name = classEntry.substring(0, classEntry.length() - ".class".length());
    for (String part : name.split("[/$]")) {
      for (String word : part.split("(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|_")) {
        if (FORBIDDEN_WORDS.contains(word.toLowerCase(Locale.ROOT))) {
          return true;
        }
      }
    }
    return false;
  }

  @Test
  void nativeLibrariesAreForLinuxX8664Alone() throws Exception {
    List<String> natives =
        entries(nodeJar()).stream().filter(e -> e.matches(".*\\.(so|dll|dylib|jnilib|a)")).toList();
    assertThat(natives)
        .as("the tokenizer's, gRPC's TLS and epoll, JNA's and lz4's")
        .hasSizeGreaterThanOrEqualTo(5);
    for (String n : natives) {
      String path = n.toLowerCase(Locale.ROOT);
      assertThat(path).as(n).containsAnyOf("x86_64", "x86-64", "amd64");
      assertThat(Arrays.asList(path.split("[/_.-]")))
          .as(n)
          .doesNotContainAnyElementsOf(FOREIGN_PLATFORMS);
    }
  }

  /**
   * The Envoy packages in the node jar are those of the protobuf descriptor closure of {@code
   * envoy/service/ext_proc/v3/external_processor.proto}, computed from the full API on this test's
   * class path, each with all its classes; and the service's descriptor builds from the node jar
   * alone, and from the full jar alone (trimmed alike).
   */
  @Test
  void envoyApiIsTheExtProcDescriptorClosure() throws Exception {
    Path api =
        Path.of(
            ExternalProcessorProto.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
    Set<String> apiPackages = classPackages(entries(api));
    Set<String> closure = new TreeSet<>();
    Deque<FileDescriptor> files = new ArrayDeque<>(List.of(ExternalProcessorProto.getDescriptor()));
    Set<String> seen = new HashSet<>();
    while (!files.isEmpty()) {
      FileDescriptor f = files.pop();
      if (seen.add(f.getName())) {
        String javaPackage =
            f.getOptions().hasJavaPackage() ? f.getOptions().getJavaPackage() : f.getPackage();
        closure.add(javaPackage.replace('.', '/'));
        files.addAll(f.getDependencies());
      }
    }
    closure.retainAll(apiPackages); // google/protobuf/* comes from protobuf-java
    List<String> node = entries(nodeJar());
    Set<String> kept = new TreeSet<>(classPackages(node));
    kept.retainAll(apiPackages);
    assertThat(kept)
        .as("distribution/pom.xml's Envoy includes against the closure")
        .containsExactlyInAnyOrderElementsOf(closure);
    Set<String> nodeEntries = new HashSet<>(node);
    for (String e : entries(api)) {
      if (e.endsWith(".class") && closure.contains(e.substring(0, e.lastIndexOf('/')))) {
        assertThat(nodeEntries).as("a class of the closure's packages").contains(e);
      }
    }
    for (Path jar : List.of(nodeJar(), FatJarNodeIT.fatJar())) { // the full jar keeps the same
      try (URLClassLoader jarOnly =
          new URLClassLoader(
              new URL[] {jar.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
        Object descriptor =
            Class.forName(ExternalProcessorProto.class.getName(), true, jarOnly)
                .getMethod("getDescriptor")
                .invoke(null);
        assertThat(descriptor.toString()).isNotEmpty();
        Object service =
            Class.forName(ExternalProcessorGrpc.class.getName(), true, jarOnly)
                .getMethod("getServiceDescriptor")
                .invoke(null);
        assertThat(service.toString()).contains("envoy.service.ext_proc.v3.ExternalProcessor");
      }
    }
  }

  private static Set<String> classPackages(List<String> entries) {
    Set<String> packages = new HashSet<>();
    for (String e : entries) {
      if (e.endsWith(".class") && e.contains("/")) {
        packages.add(e.substring(0, e.lastIndexOf('/')));
      }
    }
    return packages;
  }

  @Test
  void ingressAndAgentFromTheNodeJar_answerAChatCompletion_andPickAnEndpointOverExtProc()
      throws Exception {
    String host = "127.0.0.1";
    int engineHttp = FreePorts.one();
    int zmq = FreePorts.run(host, 2);
    int seedPort = FreePorts.one();
    int agentPort = FreePorts.one();
    int ingressHttp = FreePorts.one();
    int extproc = FreePorts.one();
    String seed = "pekko://kvrouter@" + host + ":" + seedPort;
    String engine = host + ":" + engineHttp;
    String pub = "tcp://" + host + ":" + zmq;
    String replay = "tcp://" + host + ":" + (zmq + 1);
    Path config = Files.createTempFile("kvrouter-node-jar", ".conf");
    Files.writeString(
        config,
        "kvrouter.ingress.extproc { enabled = on, host = \""
            + host
            + "\", port = "
            + extproc
            + " }");
    start(
        "sim-engine",
        FatJarNodeIT.fatJar(),
        "sim-engine",
        "--host",
        host,
        "--port",
        "" + engineHttp,
        "--kv-events",
        pub,
        "--replay",
        replay,
        "--speedup",
        "10");
    start(
        "node-ingress",
        nodeJar(),
        "ingress",
        "--profile",
        "dev",
        "--config",
        config.toString(),
        "--host",
        host,
        "--port",
        "" + seedPort,
        "--seed-nodes",
        seed,
        "--http-host",
        host,
        "--http-port",
        "" + ingressHttp);
    start(
        "node-agent",
        nodeJar(),
        "agent",
        "--profile",
        "dev",
        "--host",
        host,
        "--port",
        "" + agentPort,
        "--seed-nodes",
        seed,
        "--engine-url",
        "http://" + engine,
        "--kv-events",
        pub,
        "--replay",
        replay,
        "--replica-id",
        "sim-engine");
    String ingress = "http://" + host + ":" + ingressHttp;
    kit = ActorTestKit.create();
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(120),
            Duration.ofMillis(500),
            () -> {
              for (Process p : processes) {
                assertThat(p.isAlive()).as(NodeProcesses.tails(logs, 3000)).isTrue();
              }
              assertThat(LoopbackHttp.status(ingress + "/ready")).isEqualTo(200);
              assertThat(
                      LoopbackHttp.getJson(ingress + "/admin/replicas").findValuesAsText("replica"))
                  .containsExactly("sim-engine");
              return null;
            });

    ObjectNode chat = LoopbackHttp.JSON.createObjectNode();
    chat.put("model", "kvrouter-demo");
    chat.put("max_tokens", 8);
    chat.putArray("messages")
        .addObject()
        .put("role", "user")
        .put("content", "Which jar runs in production?");
    HttpResponse<String> answer = LoopbackHttp.post(ingress + "/v1/chat/completions", chat);
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    JsonNode completion = LoopbackHttp.JSON.readTree(answer.body());
    assertThat(completion.path("choices").path(0).path("message").path("content").asText())
        .isNotEmpty();

    channel = NettyChannelBuilder.forAddress(host, extproc).usePlaintext().build();
    assertThat(pickOverExtProc(channel, chat.toString())).isEqualTo(engine);
  }

  /**
   * Plays Envoy's part of one request's decision: request headers, then the body, in full-duplex
   * streamed mode; returns the endpoint the picker set, after checking the dynamic metadata names
   * the same one and the body comes back unchanged.
   */
  private static String pickOverExtProc(ManagedChannel channel, String body) throws Exception {
    ExtProcStream out = new ExtProcStream(ExternalProcessorGrpc.newStub(channel));
    HeaderMap.Builder headers = HeaderMap.newBuilder();
    for (String[] h :
        new String[][] {
          {":method", "POST"},
          {":path", "/v1/chat/completions"},
          {":authority", "inference-gateway"},
          {"content-type", "application/json"}
        }) {
      headers.addHeaders(
          HeaderValue.newBuilder().setKey(h[0]).setRawValue(ByteString.copyFromUtf8(h[1])));
    }
    out.send(
        ProcessingRequest.newBuilder()
            .setRequestHeaders(HttpHeaders.newBuilder().setHeaders(headers))
            .build());
    out.send(
        ProcessingRequest.newBuilder()
            .setRequestBody(
                HttpBody.newBuilder()
                    .setBody(ByteString.copyFrom(body, StandardCharsets.UTF_8))
                    .setEndOfStream(true))
            .build());
    ProcessingResponse decided = out.next();
    assertThat(decided.hasRequestHeaders()).as(decided.toString()).isTrue();
    HeaderValue set =
        decided.getRequestHeaders().getResponse().getHeaderMutation().getSetHeaders(0).getHeader();
    assertThat(set.getKey()).isEqualTo("x-gateway-destination-endpoint");
    String endpoint = set.getRawValue().toStringUtf8();
    assertThat(
            decided
                .getDynamicMetadata()
                .getFieldsOrThrow("envoy.lb")
                .getStructValue()
                .getFieldsOrThrow("x-gateway-destination-endpoint")
                .getStringValue())
        .isEqualTo(endpoint);
    ProcessingResponse bodyBack = out.next();
    assertThat(
            bodyBack
                .getRequestBody()
                .getResponse()
                .getBodyMutation()
                .getStreamedResponse()
                .getBody()
                .toStringUtf8())
        .isEqualTo(body);
    out.close();
    return endpoint;
  }

  private void start(String name, Path jar, String... args) throws Exception {
    Path log = Files.createTempFile("kvrouter-" + name, ".log");
    logs.add(log);
    processes.add(FatJarNodeIT.startJar(NodeClassArchive.javaCommand(), jar, log, args));
  }
}
