package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SseStreamSubscriberTest {

  private final AtomicLong clock = new AtomicLong();
  private final AtomicBoolean cancelled = new AtomicBoolean();

  private SseStreamSubscriber subscriber(int status) {
    SseStreamSubscriber s = new SseStreamSubscriber(3, 1, "g", 100, 150, clock::get);
    s.responseStarted(status);
    s.onSubscribe(
        new Flow.Subscription() {
          @Override
          public void request(long n) {}

          @Override
          public void cancel() {
            cancelled.set(true);
          }
        });
    return s;
  }

  private void at(long t, SseStreamSubscriber s, String... lines) {
    clock.set(t);
    for (String l : lines) {
      s.onNext(l);
    }
  }

  @Test
  void timesContentChunks_readsUsage_andEndsAtDone() {
    SseStreamSubscriber s = subscriber(200);
    at(
        200,
        s,
        ": ping",
        "",
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}",
        "");
    at(300, s, "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}", "");
    at(
        350,
        s,
        "event: message",
        "data:{\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}",
        "");
    at(420, s, "data: {\"choices\":[{\"text\":\"!\"}]}", "");
    at(
        430,
        s,
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":3,",
        "data: \"prompt_tokens_details\":{\"cached_tokens\":32}}}",
        "");
    at(500, s, "data: [DONE]", "");
    assertThat(s.outcome()).isCompleted();
    RequestOutcome o = s.outcome().join();
    assertThat(o.status()).isEqualTo(RequestOutcome.Status.OK);
    assertThat(o.chunkNanos()).containsExactly(300, 350, 420);
    assertThat(o.ttftCorrectedNanos()).isEqualTo(200);
    assertThat(o.ttftUncorrectedNanos()).isEqualTo(150);
    assertThat(o.e2eCorrectedNanos()).isEqualTo(400);
    assertThat(o.gapCount()).isEqualTo(2);
    assertThat(o.gapNanos(1)).isEqualTo(70);
    assertThat(o.promptTokens()).isEqualTo(50);
    assertThat(o.completionTokens()).isEqualTo(3);
    assertThat(o.cachedTokens()).isEqualTo(32);
    assertThat(o.index()).isEqualTo(3);
    assertThat(o.target()).isEqualTo(1);
    assertThat(cancelled).isFalse();
  }

  @Test
  void missingCachedTokens_staysUnknown() {
    SseStreamSubscriber s = subscriber(200);
    at(
        1,
        s,
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,"
            + "\"prompt_tokens_details\":null}}",
        "",
        "data: [DONE]",
        "");
    RequestOutcome o = s.outcome().join();
    assertThat(o.promptTokens()).isEqualTo(5);
    assertThat(o.cachedTokens()).isEqualTo(-1);
    assertThat(o.hasFirstChunk()).isFalse();
  }

  @Test
  void errorFrame_endsTheStreamAsStreamError() {
    SseStreamSubscriber s = subscriber(200);
    at(
        1,
        s,
        "data: {\"choices\":[{\"text\":\"a\"}]}",
        "",
        "data: {\"error\":{\"message\":\"out of memory\"}}",
        "");
    RequestOutcome o = s.outcome().join();
    assertThat(o.status()).isEqualTo(RequestOutcome.Status.STREAM_ERROR);
    assertThat(o.error()).contains("out of memory");
    assertThat(cancelled).isTrue();
  }

  @Test
  void malformedChunk_isAStreamError() {
    SseStreamSubscriber s = subscriber(200);
    at(1, s, "data: {not json", "");
    assertThat(s.outcome().join().error()).startsWith("malformed chunk");
  }

  @Test
  void non200_keepsTheStartOfTheBodyInTheError() {
    SseStreamSubscriber s = subscriber(429);
    at(1, s, "{\"error\":\"too many requests\"}");
    s.onComplete();
    RequestOutcome o = s.outcome().join();
    assertThat(o.status()).isEqualTo(RequestOutcome.Status.HTTP_ERROR);
    assertThat(o.httpStatus()).isEqualTo(429);
    assertThat(o.error()).contains("HTTP 429").contains("too many requests");
  }

  @Test
  void endWithoutDone_brokenBody_andTimeout_areFailures() {
    SseStreamSubscriber ended = subscriber(200);
    at(1, ended, "data: {\"choices\":[{\"text\":\"a\"}]}");
    ended.onComplete(); // the pending event is still dispatched
    assertThat(ended.outcome().join().status()).isEqualTo(RequestOutcome.Status.STREAM_ERROR);
    assertThat(ended.outcome().join().chunkNanos()).hasSize(1);

    SseStreamSubscriber broken = subscriber(200);
    broken.onError(new IOException("connection reset"));
    assertThat(broken.outcome().join().error()).contains("connection reset");

    SseStreamSubscriber slow = subscriber(200);
    at(7, slow, "data: {\"choices\":[{\"text\":\"a\"}]}", "");
    slow.timeOut();
    at(9, slow, "data: [DONE]", "");
    assertThat(slow.outcome().join().status()).isEqualTo(RequestOutcome.Status.TIMEOUT);
    assertThat(slow.outcome().join().endNanos()).isEqualTo(7);
    assertThat(cancelled).isTrue();
  }

  @Test
  void failureBeforeAnyResponse_isASendError() {
    SseStreamSubscriber s = new SseStreamSubscriber(0, 0, "", 0, 0, clock::get);
    s.failedBeforeResponse(new java.net.ConnectException("refused"));
    assertThat(s.outcome().join().status()).isEqualTo(RequestOutcome.Status.SEND_ERROR);
    assertThat(s.outcome().join().error()).contains("refused");

    SseStreamSubscriber timedOut = new SseStreamSubscriber(0, 0, "", 0, 0, clock::get);
    timedOut.failedBeforeResponse(
        new java.util.concurrent.CompletionException(
            new java.net.http.HttpTimeoutException("request timed out")));
    assertThat(timedOut.outcome().join().status()).isEqualTo(RequestOutcome.Status.TIMEOUT);
  }
}
