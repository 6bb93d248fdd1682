package io.kvrouter.systemtest.extproc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.typesafe.config.ConfigFactory;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kvrouter.agent.AgentGuardian;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.cli.dev.ModelSimTokenizer;
import io.kvrouter.cli.dev.SimAgentCommand;
import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.ingress.node.IngressGuardian;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.loadtest.bench.PseudoWords;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineSettings;
import io.kvrouter.sim.SimFleet;
import io.kvrouter.systemtest.testing.ExtProcStream;
import io.kvrouter.testing.FreePorts;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/**
 * kvrouter as a Gateway API Inference Extension endpoint picker, driven by a gRPC client that
 * speaks Envoy's ext_proc protocol as Envoy does in the full-duplex streamed mode GIE asks for:
 * request headers, the body in two chunks, then it takes the picked endpoint from the header
 * mutation ({@code x-gateway-destination-endpoint}) and the dynamic metadata, forwards the body
 * that came back to that engine itself (as Envoy would), and streams the engine's response headers
 * and body through the processor.
 *
 * <p>A shared-prefix workload (three groups, long common prefixes) over four simulated vLLM
 * engines: after a group's first request, every later one is picked onto the replica that holds the
 * prefix, and the engine confirms it by reporting the prefix as cached; the HTTP ingress of the
 * same node sends a request of the group to the same replica; and every reservation is released.
 */
class EndpointPickerIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final int PREFIX_WORDS = 300;

  @Test
  void sharedPrefixWorkload_isPickedOntoTheReplicaHoldingThePrefix_likeTheHttpIngress()
      throws Exception {
    int extprocPort = FreePorts.one();
    TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
    SimFleet fleet =
        SimFleet.start(
            4,
            "sim",
            0,
            0,
            SimEngineSettings.loopback()
                .withModel("kvrouter-demo")
                .withTokenizer(ModelSimTokenizer.forModel(tokenizers, "kvrouter-demo"))
                .withEngine(SimEngineConfig.defaults().withTiming(new MockerTimingModel(50))));
    CompletableFuture<InetSocketAddress> bound = new CompletableFuture<>();
    ActorSystem<Void> ingress =
        NodeBootstrap.start(
            NodeSettings.dev(List.of(NodeSettings.ROLE_INGRESS), List.of())
                .withOverrides(
                    ConfigFactory.parseMap(
                        Map.of(
                            "kvrouter.ingress.http.port",
                            0,
                            "kvrouter.ingress.http.host",
                            "127.0.0.1",
                            "kvrouter.ingress.extproc.enabled",
                            true,
                            "kvrouter.ingress.extproc.host",
                            "127.0.0.1",
                            "kvrouter.ingress.extproc.port",
                            extprocPort))),
            Map.of(NodeSettings.ROLE_INGRESS, IngressGuardian.roleGuardian(bound::complete)));
    ActorSystem<Void> agent =
        NodeBootstrap.start(
            NodeSettings.dev(
                List.of(NodeSettings.ROLE_AGENT),
                List.of(Cluster.get(ingress).selfMember().address().toString())),
            Map.of(
                NodeSettings.ROLE_AGENT,
                AgentGuardian.roleGuardian(
                    AgentSettings.of(SimAgentCommand.specs(fleet))
                        .withHeartbeat(Duration.ofMillis(500), 3))));
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", extprocPort).usePlaintext().build();
    ActorTestKit kit = ActorTestKit.create(ingress);
    try {
      String http = "http://127.0.0.1:" + bound.get(60, TimeUnit.SECONDS).getPort();
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(60),
              Duration.ofMillis(200),
              () -> {
                assertThat(status(http + "/ready")).isEqualTo(200);
                assertThat(get(http + "/admin/replicas").size()).isEqualTo(4);
                return null;
              });
      ExternalProcessorGrpc.ExternalProcessorStub stub = ExternalProcessorGrpc.newStub(channel);
      Set<String> engines = new HashSet<>();
      fleet.replicas().forEach(r -> engines.add(URI.create(r.baseUrl()).getAuthority()));

      for (int g = 0; g < 3; g++) {
        String prefix = PseudoWords.words(1000 + g, PREFIX_WORDS);
        Picked first = envoy(stub, prompt(prefix, g, 0));
        assertThat(engines).as("picked endpoint is an engine's ip:port").contains(first.endpoint);
        awaitBlocksOn(kit, http, first.endpoint);
        for (int i = 1; i < 5; i++) {
          Picked next = envoy(stub, prompt(prefix, g, i));
          assertThat(next.endpoint)
              .as("group %d request %d goes where its prefix is", g, i)
              .isEqualTo(first.endpoint);
          assertThat(next.cachedTokens)
              .as("the engine reports the shared prefix as cached")
              .isGreaterThanOrEqualTo(PREFIX_WORDS / 2);
        }
        // The node's HTTP ingress decides the same way: the prefix is a cache hit there too.
        HttpResponse<String> viaHttp =
            HTTP.send(
                HttpRequest.newBuilder(URI.create(http + "/v1/completions"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(prompt(prefix, g, 99)))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(viaHttp.statusCode()).as(viaHttp.body()).isEqualTo(200);
        assertThat(cached(JSON.readTree(viaHttp.body()))).isGreaterThanOrEqualTo(PREFIX_WORDS / 2);
      }
      kit.createTestProbe()
          .awaitAssert(
              Duration.ofSeconds(20),
              Duration.ofMillis(200),
              () -> {
                for (JsonNode r : get(http + "/admin/replicas")) {
                  assertThat(r.path("in_flight").asInt()).as("released: %s", r).isZero();
                }
                return null;
              });
    } finally {
      channel.shutdownNow();
      agent.terminate();
      ingress.terminate();
      agent.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      ingress.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      fleet.close();
      tokenizers.close();
    }
  }

  /** What one request went through: the endpoint picked and the engine's cached tokens. */
  record Picked(String endpoint, int cachedTokens) {}

  private static String prompt(String prefix, int group, int i) {
    return "{\"model\":\"kvrouter-demo\",\"prompt\":\""
        + prefix
        + " group "
        + group
        + " question "
        + i
        + " "
        + PseudoWords.words(5000 + 100 * group + i, 20)
        + "\",\"max_tokens\":4}";
  }

  /** Plays Envoy's part for one request: ext_proc exchange, then the upstream call. */
  private static Picked envoy(ExternalProcessorGrpc.ExternalProcessorStub stub, String body)
      throws Exception {
    ExtProcStream out = new ExtProcStream(stub);
    out.send(
        ProcessingRequest.newBuilder()
            .setRequestHeaders(
                HttpHeaders.newBuilder()
                    .setHeaders(
                        HeaderMap.newBuilder()
                            .addHeaders(header(":method", "POST"))
                            .addHeaders(header(":path", "/v1/completions"))
                            .addHeaders(header(":authority", "inference-gateway"))
                            .addHeaders(header("content-type", "application/json")))
                    .setEndOfStream(false))
            .build());
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    int half = bytes.length / 2;
    out.send(bodyChunk(ByteString.copyFrom(bytes, 0, half), false));
    out.send(bodyChunk(ByteString.copyFrom(bytes, half, bytes.length - half), true));

    ProcessingResponse headers = out.next();
    assertThat(headers.hasRequestHeaders()).as(headers.toString()).isTrue();
    String endpoint =
        headers
            .getRequestHeaders()
            .getResponse()
            .getHeaderMutation()
            .getSetHeaders(0)
            .getHeader()
            .getRawValue()
            .toStringUtf8();
    assertThat(
            headers
                .getRequestHeaders()
                .getResponse()
                .getHeaderMutation()
                .getSetHeaders(0)
                .getHeader()
                .getKey())
        .isEqualTo("x-gateway-destination-endpoint");
    assertThat(
            headers
                .getDynamicMetadata()
                .getFieldsOrThrow("envoy.lb")
                .getStructValue()
                .getFieldsOrThrow("x-gateway-destination-endpoint")
                .getStringValue())
        .as("header and metadata name the same endpoint")
        .isEqualTo(endpoint);
    ProcessingResponse bodyBack = out.next();
    ByteString forwarded =
        bodyBack.getRequestBody().getResponse().getBodyMutation().getStreamedResponse().getBody();
    assertThat(forwarded.toStringUtf8()).isEqualTo(body);

    HttpResponse<String> upstream =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://" + endpoint + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(forwarded.toByteArray()))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(upstream.statusCode()).as(upstream.body()).isEqualTo(200);
    out.send(
        ProcessingRequest.newBuilder()
            .setResponseHeaders(
                HttpHeaders.newBuilder()
                    .setHeaders(HeaderMap.newBuilder().addHeaders(header(":status", "200"))))
            .build());
    assertThat(out.next().hasResponseHeaders()).isTrue();
    out.send(
        ProcessingRequest.newBuilder()
            .setResponseBody(
                HttpBody.newBuilder()
                    .setBody(ByteString.copyFromUtf8(upstream.body()))
                    .setEndOfStream(true))
            .build());
    assertThat(out.next().hasResponseBody()).isTrue();
    out.close();
    return new Picked(endpoint, cached(JSON.readTree(upstream.body())));
  }

  private static ProcessingRequest bodyChunk(ByteString bytes, boolean end) {
    return ProcessingRequest.newBuilder()
        .setRequestBody(HttpBody.newBuilder().setBody(bytes).setEndOfStream(end))
        .build();
  }

  private static HeaderValue header(String key, String value) {
    return HeaderValue.newBuilder().setKey(key).setRawValue(ByteString.copyFromUtf8(value)).build();
  }

  private static int cached(JsonNode response) {
    return response.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt(-1);
  }

  /** Waits until the tracker holds blocks on the replica at {@code endpoint} (its KV events). */
  private static void awaitBlocksOn(ActorTestKit kit, String http, String endpoint) {
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(20),
            Duration.ofMillis(100),
            () -> {
              List<Integer> blocks = new ArrayList<>();
              for (JsonNode r : get(http + "/admin/replicas")) {
                if (r.path("url").asText().endsWith(endpoint)) {
                  blocks.add(r.path("blocks").asInt());
                }
              }
              assertThat(blocks).hasSize(1);
              assertThat(blocks.get(0)).isGreaterThan(PREFIX_WORDS / 16 / 2);
              return null;
            });
  }

  private static int status(String url) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private static JsonNode get(String url) throws Exception {
    return JSON.readTree(
        HTTP.send(
                HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString())
            .body());
  }
}
