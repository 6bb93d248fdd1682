package io.kvrouter.protocol;

import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * What an ingress tracker answers its peers: every ingress registers one endpoint under {@link
 * #SERVICE_KEY}. Requests: {@link GetTrackerReport} (for the cluster-wide consistency view; {@link
 * GetTrackerView} for nodes of earlier versions) and {@link ReplayReservations} (a peer missed some
 * of this tracker's reservation events).
 */
public interface TrackerRequest {

  /** Every ingress tracker's endpoint registers under this key. */
  ServiceKey<TrackerRequest> SERVICE_KEY =
      ServiceKey.create(TrackerRequest.class, "kvrouter-tracker");
}
