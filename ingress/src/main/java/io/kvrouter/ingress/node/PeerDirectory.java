package io.kvrouter.ingress.node;

import io.kvrouter.protocol.TrackerRequest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The tracker endpoints of every ingress in the cluster (this one included), by ingress id, as the
 * Receptionist lists them. Written by {@link PeerSync}, read by the consistency view; thread-safe.
 */
public final class PeerDirectory {

  private final Map<String, ActorRef<TrackerRequest>> peers = new ConcurrentHashMap<>();

  void replaceAll(Map<String, ActorRef<TrackerRequest>> now) {
    peers.keySet().retainAll(now.keySet());
    peers.putAll(now);
  }

  /** A snapshot of the current endpoints. */
  public Map<String, ActorRef<TrackerRequest>> all() {
    return Map.copyOf(peers);
  }

  ActorRef<TrackerRequest> get(String ingressId) {
    return peers.get(ingressId);
  }
}
