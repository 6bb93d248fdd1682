package io.kvrouter.ingress.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ResponseIdsTest {

  @Test
  void issuedId_givesBackTheEngineIdAndTheReplica() {
    String id = ResponseIds.encode("resp_0af3", "replica-a#1");
    assertThat(id).startsWith("resp_0af3.kvr.");
    assertThat(ResponseIds.decode(id))
        .isEqualTo(new ResponseIds.Issued("resp_0af3", "replica-a#1", null));
  }

  @Test
  void issuedIdWithAProgram_givesItBack() {
    String id = ResponseIds.encode("resp_0af3", "replica-a#1", "agent.run/7");
    assertThat(ResponseIds.decode(id))
        .isEqualTo(new ResponseIds.Issued("resp_0af3", "replica-a#1", "agent.run/7"));
    assertThat(ResponseIds.encode("resp_0af3", "replica-a#1", null))
        .isEqualTo(ResponseIds.encode("resp_0af3", "replica-a#1"));
  }

  @Test
  void idsKvrouterDidNotIssue_areNotOurs() {
    assertThat(ResponseIds.decode("resp_0af3")).isNull();
    assertThat(ResponseIds.decode("resp_0af3.kvr.!!!")).isNull();
    assertThat(ResponseIds.decode(".kvr.c2lt")).isNull();
  }
}
