package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.extproc.ExtProcServer;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.ChatPrefixCache;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.testing.FreePorts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The bench's Envoy side against the real endpoint picker ({@link ExtProcServer}, in process, over
 * gRPC on loopback) with a router that answers as told: a decision carries the destination, the
 * picker saw the whole body (its prompt tokens), and the response phase and half-close end the
 * reservation exactly once; an immediate response is an error, not a decision.
 */
class EnvoyExchangeTest {

  private final RecordingRouter router = new RecordingRouter();
  private final PickerWorkload workload =
      new PickerWorkload(TokenizerRegistry.DEMO_MODEL, 1024, 4, 0.75, 7);
  private ActorTestKit kit;
  private TokenizerRegistry tokenizers;
  private ChatPrefixCache cache;
  private ManagedChannel channel;
  private int port;

  @BeforeEach
  void startPicker() {
    port = FreePorts.one();
    Config config =
        ConfigFactory.parseMap(
                Map.of(
                    "kvrouter.ingress.extproc.enabled",
                    true,
                    "kvrouter.ingress.extproc.host",
                    "127.0.0.1",
                    "kvrouter.ingress.extproc.port",
                    port))
            .withFallback(ConfigFactory.load());
    kit = ActorTestKit.create("picker", config);
    tokenizers = TokenizerRegistry.fromConfig(config);
    cache = new ChatPrefixCache(tokenizers, 1 << 20);
    assertThat(
            ExtProcServer.startIfEnabled(
                kit.system(),
                router,
                new RequestTokenizer(
                    tokenizers,
                    router,
                    TokenizerRegistry.DEMO_MODEL,
                    new PromptEncoder(Runnable::run, cache))))
        .isEqualTo(port);
    channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    kit.shutdownTestKit();
    tokenizers.close();
  }

  @Test
  void oneDecision_carriesTheDestination_afterTheWholeBody_andReleasesItsReservationOnce()
      throws Exception {
    router.answer = new RouteOutcome.Routed("r-1", target("http://10.0.0.7:8000"), 0);

    EnvoyExchange.Outcome outcome = exchange(0, 1000);

    assertThat(outcome.error()).isNull();
    assertThat(outcome.destination()).isEqualTo("10.0.0.7:8000");
    assertThat(outcome.decisionNanos()).isPositive();
    assertThat(router.queries).hasSize(1);
    assertThat(router.queries.get(0).tokenIds()).hasSize(workload.promptTokens(0));
    assertThat(router.prefilled).containsExactly("r-1");
    assertThat(router.released).containsExactly("r-1");
  }

  @Test
  void theSecondRequestOfAGroup_findsItsSystemPromptInTheSharedPrefixCache() throws Exception {
    router.answer = new RouteOutcome.Routed("r-3", target("http://10.0.0.9:8000"), 0);

    exchange(0, 16384);
    exchange(4, 16384); // the workload has 4 groups: request 4 shares request 0's system prompt

    assertThat(cache.hits()).isEqualTo(1);
    assertThat(router.queries.get(1).tokenIds()).hasSize(workload.promptTokens(4));
  }

  @Test
  void anImmediateResponse_isAnError_notADecision() throws Exception {
    router.answer = new RouteOutcome.NoReplica("nothing serves it");

    EnvoyExchange.Outcome outcome = exchange(1, 16384);

    assertThat(outcome.ok()).isFalse();
    assertThat(outcome.error()).isEqualTo("immediate 503");
    assertThat(router.released).isEmpty();
  }

  @Test
  void aRound_sendsEveryDecision_andMeasuresThePickersCpu() throws Exception {
    router.answer = new RouteOutcome.Routed("r-2", target("http://10.0.0.8:8000"), 0);

    List<PickerBench.Round> rounds =
        PickerBench.run(
            new PickerBench.Settings(
                "127.0.0.1",
                port,
                ProcessHandle.current().pid(),
                100,
                20,
                0,
                1,
                1,
                new PickerBench.WorkloadShape(TokenizerRegistry.DEMO_MODEL, 256, 2, 0.5, 3),
                16384,
                Duration.ofSeconds(30)),
            System.out);

    assertThat(rounds).hasSize(1);
    PickerBench.Round round = rounds.get(0);
    assertThat(round.sent()).isEqualTo(20);
    assertThat(round.ok()).isEqualTo(20);
    assertThat(round.errors()).isEmpty();
    assertThat(round.cpuMsPerDecision()).isPositive();
    assertThat(router.released).hasSize(20);
  }

  /** Request {@code i} of the workload through the picker, its body in chunks of {@code chunk}. */
  private EnvoyExchange.Outcome exchange(int i, int chunk) throws Exception {
    return EnvoyExchange.start(
            ExternalProcessorGrpc.newStub(channel), "/v1/chat/completions", workload.body(i), chunk)
        .result()
        .get(30, TimeUnit.SECONDS);
  }

  private static Target target(String url) {
    return new Target("replica", url, true, List.of());
  }

  /** Answers every query with {@link #answer} and records what the picker told it. */
  private static final class RecordingRouter implements Router {
    volatile RouteOutcome answer;
    final List<ReplicaQuery> queries = new CopyOnWriteArrayList<>();
    final List<String> prefilled = new CopyOnWriteArrayList<>();
    final List<String> released = new CopyOnWriteArrayList<>();

    @Override
    public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
      queries.add(query);
      return CompletableFuture.completedFuture(answer);
    }

    @Override
    public void prefillCompleted(String reservationId) {
      prefilled.add(reservationId);
    }

    @Override
    public void released(String reservationId) {
      released.add(reservationId);
    }

    @Override
    public Set<String> servedModels() {
      return Set.of(TokenizerRegistry.DEMO_MODEL);
    }

    @Override
    public String baseModel(String model) {
      return model;
    }

    @Override
    public boolean disaggregated(String model) {
      return false;
    }
  }
}
