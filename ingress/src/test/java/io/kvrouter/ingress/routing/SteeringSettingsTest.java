package io.kvrouter.ingress.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.tracker.steering.Steering;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The tracker's steering says whether a query opens its session, with or without other asks. */
class SteeringSettingsTest {

  @Test
  void openingASession_reachesTheTrackersSteering() {
    ReplicaQuery plain = new ReplicaQuery("q", "m", new int[] {1}, 8, Set.of(), "chat", null, null);
    SteeringSettings none = SteeringSettings.NONE;
    assertThat(none.steering(plain, null)).isEqualTo(Steering.NONE);
    assertThat(none.steering(plain.withOpensSession(true), null)).isEqualTo(Steering.OPENS_SESSION);
    Steering withAdapter = none.steering(plain.withOpensSession(true), Set.of("r1"));
    assertThat(withAdapter.opensSession()).isTrue();
    assertThat(withAdapter.adapterHolders()).containsExactly("r1");
    assertThat(none.steering(plain.withBoundReplica("r1"), null).opensSession()).isFalse();
  }
}
