package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.ingress.api.ApiError;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.junit.jupiter.api.Test;

class LimitVerdictTest {

  @Test
  void aRefusal_isOpenAisRateLimitError_namingTheLimit() {
    LimitVerdict v =
        new LimitVerdict(
            false,
            "requests",
            "acme",
            new LimitVerdict.Standing(10, 10, 0, 6_000),
            new LimitVerdict.Standing(1000, 400, 600, 0),
            40);
    ApiError e = v.error();
    assertThat(e.status()).isEqualTo(429);
    assertThat(e.type()).isEqualTo("requests");
    assertThat(e.code()).isEqualTo("rate_limit_exceeded");
    assertThat(e.retryAfterSeconds()).isEqualTo(6);
    assertThat(e.message())
        .isEqualTo(
            "Rate limit reached for tenant 'acme' on requests per min (RPM): Limit 10, Used 10,"
                + " Requested 1. Please try again in 6s.");
    Map<String, String> headers =
        v.headers().stream().collect(Collectors.toMap(HttpHeader::name, HttpHeader::value));
    assertThat(headers)
        .containsEntry("x-ratelimit-limit-requests", "10")
        .containsEntry("x-ratelimit-remaining-requests", "0")
        .containsEntry("x-ratelimit-reset-requests", "6s")
        .containsEntry("x-ratelimit-limit-tokens", "1000")
        .containsEntry("x-ratelimit-remaining-tokens", "600")
        .containsEntry("x-ratelimit-reset-tokens", "0ms");
  }

  @Test
  void unlimitedTenants_getNoHeaders() {
    assertThat(LimitVerdict.unlimited("x").headers()).isEmpty();
  }

  @Test
  void durations_readAsOpenAiWritesThem() {
    assertThat(LimitVerdict.duration(250)).isEqualTo("250ms");
    assertThat(LimitVerdict.duration(1500)).isEqualTo("1.5s");
    assertThat(LimitVerdict.duration(1000)).isEqualTo("1s");
    assertThat(LimitVerdict.duration(360_000)).isEqualTo("6m0s");
    assertThat(LimitVerdict.duration(61_200)).isEqualTo("1m2s");
  }
}
