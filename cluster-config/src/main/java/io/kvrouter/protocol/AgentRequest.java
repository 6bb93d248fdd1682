package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * What a replica agent answers: every agent registers one actor per replica under {@link
 * #SERVICE_KEY}, and trackers watch that listing. Requests that cross the wire are {@link GetInfo}
 * and {@link RequestReplay}; the agent's own timers also implement this interface (it is
 * deliberately not sealed, so the agent module can add private messages).
 */
public interface AgentRequest {

  /** Every replica agent registers under this key. */
  ServiceKey<AgentRequest> SERVICE_KEY =
      ServiceKey.create(AgentRequest.class, "kvrouter-replica-agent");
}
