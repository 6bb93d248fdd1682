package io.kvrouter.ingress.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The {@code x-kvrouter-endpoint} value out of the base URLs replicas announce. */
class RouteHeadersEndpointTest {

  @Test
  void endpointIsTheHostAndPort_withoutPathOrUserInformation() {
    assertThat(RouteHeaders.endpoint("http://10.0.0.7:8000")).isEqualTo("10.0.0.7:8000");
    assertThat(RouteHeaders.endpoint("http://vllm-0.vllm:8000/v1")).isEqualTo("vllm-0.vllm:8000");
    assertThat(RouteHeaders.endpoint("http://user:secret@engine:9000/")).isEqualTo("engine:9000");
    assertThat(RouteHeaders.endpoint("http://[fd00::7]:8000")).isEqualTo("[fd00::7]:8000");
  }

  @Test
  void aUrlWithoutAPort_getsItsSchemesDefault() {
    assertThat(RouteHeaders.endpoint("http://engine")).isEqualTo("engine:80");
    assertThat(RouteHeaders.endpoint("https://engine/v1")).isEqualTo("engine:443");
    assertThat(RouteHeaders.endpoint("http://[fd00::7]")).isEqualTo("[fd00::7]:80");
  }
}
