package io.kvrouter.ingress.extproc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.typesafe.config.ConfigFactory;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kvrouter.ingress.api.RequestTokenizer;
import io.kvrouter.ingress.routing.ReplicaQuery;
import io.kvrouter.ingress.routing.RouteOutcome;
import io.kvrouter.ingress.routing.Router;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.ChatPrefixCache;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One ext_proc stream driven message by message, as gRPC's direct executor delivers them: the body
 * is decoded and tokenized on the tokenizer's pool, not on the thread that delivered it; bad input
 * on the pool still gets its own OpenAI error; and a stream that ends while its request is decided
 * releases the reservation the decision brings, and sends nothing more.
 */
class PickerStreamTest {

  private static final String CHAT =
      "{\"model\":\"kvrouter-demo\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";

  private final TokenizerRegistry tokenizers = TokenizerRegistry.fromConfig(ConfigFactory.load());
  private final Queue<Runnable> pool = new ArrayDeque<>();
  private final PendingRouter router = new PendingRouter();
  private final List<ProcessingResponse> sent = new CopyOnWriteArrayList<>();
  private final PickerStream stream =
      new PickerStream(
          new Recorder(sent),
          new DestinationReplies(),
          new PromptDecoder(
              new ObjectMapper(),
              new RequestTokenizer(
                  tokenizers,
                  router,
                  TokenizerRegistry.DEMO_MODEL,
                  new PromptEncoder(pool::add, new ChatPrefixCache(tokenizers, 1 << 20)))),
          router,
          1 << 20,
          "epp-test");

  @AfterEach
  void close() {
    tokenizers.close();
  }

  @Test
  void theBody_isTokenizedOnThePool_notOnTheThreadThatDeliveredIt() {
    stream.onNext(headers("/v1/chat/completions"));
    stream.onNext(body(CHAT));

    assertThat(router.queries).isEmpty();
    assertThat(pool).hasSize(1);
    pool.poll().run();
    assertThat(router.queries).hasSize(1);
    assertThat(router.queries.get(0).tokenIds()).isNotEmpty();

    router.answer.complete(new RouteOutcome.Routed("r-1", target(), 0));

    assertThat(sent).hasSize(2);
    assertThat(DestinationRepliesTest.destination(sent.get(0))).isEqualTo("10.0.0.7:8000");
    assertThat(sent.get(1).getRequestBody().getResponse().getBodyMutation().getStreamedResponse())
        .satisfies(b -> assertThat(b.getBody().toStringUtf8()).isEqualTo(CHAT));
  }

  @Test
  void badInput_decodedOnThePool_isAnsweredWithItsOwnError() {
    stream.onNext(headers("/v1/chat/completions"));
    stream.onNext(body("{\"model\":\"kvrouter-demo\",\"messages\":[]"));
    pool.poll().run();

    assertThat(router.queries).isEmpty();
    assertThat(sent).hasSize(1);
    assertThat(sent.get(0).getImmediateResponse().getStatus().getCodeValue()).isEqualTo(400);
    assertThat(sent.get(0).getImmediateResponse().getBody().toStringUtf8())
        .contains("invalid_json");
  }

  @Test
  void aStreamCancelledWhileItsRequestIsDecided_releasesTheReservationThatDecisionBrings() {
    stream.onNext(headers("/v1/chat/completions"));
    stream.onNext(body(CHAT));
    pool.poll().run();

    stream.onError(Status.CANCELLED.asRuntimeException()); // Envoy's ext_proc timeout
    router.answer.complete(new RouteOutcome.Routed("r-2", target(), 0));

    assertThat(router.released).containsExactly("r-2");
    assertThat(sent).isEmpty();
  }

  @Test
  void aStreamHalfClosedWhileItsRequestIsDecided_releasesTheReservationOnce() {
    stream.onNext(headers("/v1/chat/completions"));
    stream.onNext(body(CHAT));
    pool.poll().run();

    stream.onCompleted();
    router.answer.complete(new RouteOutcome.Routed("r-3", target(), 0));
    stream.onError(Status.CANCELLED.asRuntimeException());

    assertThat(router.released).containsExactly("r-3");
    assertThat(sent).isEmpty();
  }

  private static ProcessingRequest headers(String path) {
    return ProcessingRequest.newBuilder()
        .setRequestHeaders(
            HttpHeaders.newBuilder()
                .setHeaders(
                    HeaderMap.newBuilder()
                        .addHeaders(
                            HeaderValue.newBuilder()
                                .setKey(":path")
                                .setRawValue(ByteString.copyFromUtf8(path)))))
        .build();
  }

  private static ProcessingRequest body(String json) {
    return ProcessingRequest.newBuilder()
        .setRequestBody(
            HttpBody.newBuilder()
                .setBody(ByteString.copyFrom(json, StandardCharsets.UTF_8))
                .setEndOfStream(true))
        .build();
  }

  private static Target target() {
    return new Target("replica", "http://10.0.0.7:8000", true, List.of());
  }

  /** Envoy's side of the stream: what the picker sent, and it must not send after completing. */
  private record Recorder(List<ProcessingResponse> sent)
      implements StreamObserver<ProcessingResponse> {
    @Override
    public void onNext(ProcessingResponse value) {
      sent.add(value);
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }

  /** Answers every query with {@link #answer}, which the test completes. */
  private static final class PendingRouter implements Router {
    final CompletableFuture<RouteOutcome> answer = new CompletableFuture<>();
    final List<ReplicaQuery> queries = new CopyOnWriteArrayList<>();
    final List<String> released = new CopyOnWriteArrayList<>();

    @Override
    public CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query) {
      queries.add(query);
      return answer;
    }

    @Override
    public void prefillCompleted(String reservationId) {}

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
