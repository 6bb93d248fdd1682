package io.kvrouter.agent;

import io.kvrouter.protocol.AgentRequest;
import io.kvrouter.sim.SimEngine;
import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.receptionist.Receptionist;

/** What the agent tests share: a sim engine's replica, and waiting for a registration. */
final class AgentTestSupport {

  private AgentTestSupport() {}

  /** Replica {@code sim-0} of {@code engine}, serving {@code model} with 16-token blocks. */
  static ReplicaSpec spec(SimEngine engine, String model) {
    return new ReplicaSpec(
        "sim-0",
        0,
        model,
        engine.baseUrl(),
        16,
        engine.kvEventsEndpoint(),
        engine.replayEndpoint(),
        "");
  }

  /**
   * Waits until {@code agent} is registered with the receptionist; returns the probe subscribed to
   * the listing (its next messages are the later changes).
   */
  static TestProbe<Receptionist.Listing> awaitRegistered(
      ActorTestKit testKit, ActorRef<AgentRequest> agent) {
    TestProbe<Receptionist.Listing> listing = testKit.createTestProbe();
    testKit
        .system()
        .receptionist()
        .tell(Receptionist.subscribe(AgentRequest.SERVICE_KEY, listing.getRef()));
    listing.fishForMessage(
        Duration.ofSeconds(10),
        l ->
            l.getServiceInstances(AgentRequest.SERVICE_KEY).contains(agent)
                ? FishingOutcomes.complete()
                : FishingOutcomes.continueAndIgnore());
    return listing;
  }
}
