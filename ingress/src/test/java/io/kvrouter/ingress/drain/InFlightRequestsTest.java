package io.kvrouter.ingress.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class InFlightRequestsTest {

  private final ActorTestKit kit = ActorTestKit.create();
  private final Materializer mat = Materializer.matFromSystem(kit.system());

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aStreamedResponse_countsUntilItsLastByte_andTheDrainWaitsForIt() throws Exception {
    InFlightRequests inFlight = new InFlightRequests(mat);
    Pair<CompletableFuture<Optional<ByteString>>, Source<ByteString, NotUsed>> stream =
        Source.<ByteString>maybe().preMaterialize(mat);
    var handler = streaming(inFlight, ContentTypes.TEXT_PLAIN_UTF8, stream.second());
    HttpResponse response =
        handler.apply(HttpRequest.POST("/v1/completions")).toCompletableFuture().get();
    CompletionStage<List<ByteString>> body =
        response.entity().getDataBytes().runWith(Sink.seq(), mat);
    assertThat(inFlight.inFlight()).isEqualTo(1);

    inFlight.close();
    CompletableFuture<?> drained = inFlight.drained(Duration.ofSeconds(30)).toCompletableFuture();
    HttpResponse refused =
        handler.apply(HttpRequest.POST("/v1/completions")).toCompletableFuture().get();
    assertThat(refused.status().intValue()).as("new requests after close").isEqualTo(503);
    assertThat(drained).as("the stream is still running").isNotDone();

    stream.first().complete(Optional.of(ByteString.fromString("data: 1\n\n")));
    drained.get(10, TimeUnit.SECONDS);
    assertThat(body.toCompletableFuture().get(10, TimeUnit.SECONDS)).hasSize(1);
    assertThat(inFlight.inFlight()).isZero();
  }

  @Test
  void theDrainEndsAtTheGracePeriod_whenAStreamNeverEnds() throws Exception {
    InFlightRequests inFlight = new InFlightRequests(mat);
    var handler = streaming(inFlight, ContentTypes.TEXT_PLAIN_UTF8, Source.<ByteString>maybe());
    HttpResponse response = handler.apply(HttpRequest.GET("/")).toCompletableFuture().get();
    response.entity().getDataBytes().runWith(Sink.ignore(), mat);
    inFlight.close();
    inFlight.drained(Duration.ofMillis(200)).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(inFlight.inFlight()).isEqualTo(1);
  }

  @Test
  void abort_answersARequestNotYetAnswered_with503AndAnErrorObject_inItsApisShape()
      throws Exception {
    InFlightRequests inFlight = new InFlightRequests(mat);
    var handler = inFlight.wrap(request -> new CompletableFuture<HttpResponse>()); // never answers
    CompletableFuture<HttpResponse> openAi =
        handler.apply(HttpRequest.POST("/v1/completions")).toCompletableFuture();
    CompletableFuture<HttpResponse> anthropic =
        handler.apply(HttpRequest.POST("/v1/messages")).toCompletableFuture();
    assertThat(inFlight.inFlight()).isEqualTo(2);

    inFlight.abort();
    HttpResponse o = openAi.get(10, TimeUnit.SECONDS);
    HttpResponse a = anthropic.get(10, TimeUnit.SECONDS);
    assertThat(o.status().intValue()).isEqualTo(503);
    assertThat(body(o)).contains("\"error\":{\"message\":").contains("ingress_downed");
    assertThat(a.status().intValue()).isEqualTo(503);
    assertThat(body(a)).startsWith("{\"type\":\"error\",\"error\":{\"type\":");
    assertThat(inFlight.inFlight()).isZero();
    assertThat(handler.apply(HttpRequest.POST("/v1/completions")).toCompletableFuture().get())
        .extracting(r -> r.status().intValue())
        .isEqualTo(503);
  }

  @Test
  void abort_endsAnEventStreamUnderWay_withAnErrorEvent() throws Exception {
    InFlightRequests inFlight = new InFlightRequests(mat);
    var handler =
        streaming(
            inFlight,
            MediaTypes.TEXT_EVENT_STREAM.toContentType(),
            Source.single(ByteString.fromString("data: {\"text\":\"a\"}\n\n"))
                .concat(Source.<ByteString>maybe()));
    HttpResponse response =
        handler.apply(HttpRequest.POST("/v1/completions")).toCompletableFuture().get();
    List<String> received = new java.util.concurrent.CopyOnWriteArrayList<>();
    response.entity().getDataBytes().runWith(Sink.foreach(b -> received.add(b.utf8String())), mat);
    assertThat(inFlight.inFlight()).isEqualTo(1);
    // The stream is under way once its first event reached the client.
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            () -> {
              assertThat(String.join("", received)).startsWith("data: {\"text\":\"a\"}");
              return null;
            });

    inFlight.abort();
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            () -> {
              assertThat(String.join("", received))
                  .startsWith("data: {\"text\":\"a\"}")
                  .contains("data: {\"error\":{")
                  .endsWith("data: [DONE]\n\n");
              assertThat(inFlight.inFlight()).isZero();
              return null;
            });
  }

  @Test
  void abort_failsAnOtherStreamedBodyUnderWay_andOneStartedAfterIt() throws Exception {
    InFlightRequests inFlight = new InFlightRequests(mat);
    var handler =
        streaming(
            inFlight,
            ContentTypes.APPLICATION_OCTET_STREAM,
            Source.single(ByteString.fromString("part")).concat(Source.<ByteString>maybe()));
    HttpResponse running =
        handler.apply(HttpRequest.POST("/v1/completions")).toCompletableFuture().get();
    HttpResponse later =
        handler.apply(HttpRequest.POST("/v1/completions")).toCompletableFuture().get();
    CompletionStage<String> whole =
        running.entity().getDataBytes().runFold("", (acc, b) -> acc + b.utf8String(), mat);
    assertThat(inFlight.inFlight()).isEqualTo(2);

    inFlight.abort();
    assertThat(whole.toCompletableFuture())
        .failsWithin(Duration.ofSeconds(10))
        .withThrowableThat()
        .withMessageContaining("removed from the cluster");
    // A body whose stream starts only after the abort fails as it starts: never a whole answer.
    assertThat(
            later
                .entity()
                .getDataBytes()
                .runFold("", (acc, b) -> acc + b.utf8String(), mat)
                .toCompletableFuture())
        .failsWithin(Duration.ofSeconds(10));
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(10),
            () -> {
              assertThat(inFlight.inFlight()).isZero();
              return null;
            });
  }

  /** The handler {@code inFlight} wraps around one answering every request with {@code body}. */
  private static org.apache.pekko.japi.function.Function<HttpRequest, CompletionStage<HttpResponse>>
      streaming(
          InFlightRequests inFlight,
          org.apache.pekko.http.javadsl.model.ContentType type,
          Source<ByteString, ?> body) {
    return inFlight.wrap(
        request ->
            CompletableFuture.completedFuture(
                HttpResponse.create().withEntity(HttpEntities.createChunked(type, body))));
  }

  private String body(HttpResponse r) throws Exception {
    return r.entity()
        .toStrict(10_000, mat)
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS)
        .getData()
        .utf8String();
  }
}
