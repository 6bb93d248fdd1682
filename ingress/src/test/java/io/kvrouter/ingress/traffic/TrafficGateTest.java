package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.api.ApiException;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.tracing.RequestTrace;
import org.junit.jupiter.api.Test;

class TrafficGateTest {

  static final ObjectMapper JSON = new ObjectMapper();
  final TrafficGate gate =
      IngressTraffic.standalone(ConfigFactory.load(), TrafficMetrics.discarding()).gate();

  static InferenceRequest chat(String bodyJson, int maxTokens) throws Exception {
    ObjectNode body = (ObjectNode) JSON.readTree(bodyJson);
    return new InferenceRequest(
        Endpoint.CHAT, "m", false, maxTokens, "hi", null, null, null, null, body);
  }

  static TrafficHeaders headers(String priority, String ttft, String session) {
    return new TrafficHeaders(null, session, priority, ttft, null, null);
  }

  RequestTraffic describe(TrafficHeaders h, InferenceRequest r, Tenant t) {
    return gate.describe(h, r, t, 100, 0, RequestTrace.NONE);
  }

  @Test
  void priority_comesFromTheHeader_elseTheBody_elseTheTenant_elseTheDefault() throws Exception {
    Tenant gold = new Tenant("gold", 0, 0, 1, -5);
    InferenceRequest withField = chat("{\"priority\": 7}", 20);
    InferenceRequest without = chat("{}", 20);
    assertThat(describe(headers("3", null, null), withField, gold).priority()).isEqualTo(3);
    assertThat(describe(TrafficHeaders.NONE, withField, gold).priority()).isEqualTo(7);
    assertThat(describe(TrafficHeaders.NONE, without, gold).priority()).isEqualTo(-5);
    assertThat(describe(TrafficHeaders.NONE, without, Tenant.DEFAULT).priority()).isZero();
    assertThat(describe(TrafficHeaders.NONE, without, Tenant.DEFAULT).tokens())
        .as("prompt plus max_tokens")
        .isEqualTo(120);
  }

  @Test
  void malformedPriorityOrTarget_isA400() throws Exception {
    InferenceRequest plain = chat("{}", 0);
    assertThat(status(() -> describe(headers("high", null, null), plain, Tenant.DEFAULT)))
        .isEqualTo(400);
    assertThat(status(() -> describe(headers(null, "0", null), plain, Tenant.DEFAULT)))
        .isEqualTo(400);
    assertThat(status(() -> describe(headers(null, "fast", null), plain, Tenant.DEFAULT)))
        .isEqualTo(400);
    InferenceRequest badField = chat("{\"priority\": \"urgent\"}", 0);
    ApiException e =
        catchThrowableOfType(
            ApiException.class, () -> describe(TrafficHeaders.NONE, badField, Tenant.DEFAULT));
    assertThat(e.error().param()).isEqualTo("priority");
    assertThat(describe(headers(null, "250", null), plain, Tenant.DEFAULT).ttftTargetMillis())
        .isEqualTo(250);
  }

  @Test
  void theSessionHeader_overridesTheBodysKey() throws Exception {
    InferenceRequest r = chat("{}", 0).withSessionKey("user-7");
    assertThat(gate.withSession(TrafficHeaders.NONE, r).sessionKey()).isEqualTo("user-7");
    assertThat(gate.withSession(headers(null, null, "conv-1"), r).sessionKey()).isEqualTo("conv-1");
  }

  static int status(Runnable r) {
    try {
      r.run();
      return 200;
    } catch (ApiException e) {
      return e.error().status();
    }
  }
}
