package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.CompletionStage;

/** Read-only views the admin endpoints serve, and the debug hooks, over the node's tracker. */
public interface AdminView {

  /** {@code GET /admin/replicas}: per replica its model, URL, load and blocks held. */
  CompletionStage<JsonNode> replicas();

  /**
   * {@code GET /ready}: true when the node may take traffic (bound, caught up with the cluster,
   * some replica serving, not draining); false as well when its readiness does not answer in time.
   */
  CompletionStage<Boolean> ready();

  /** {@code GET /admin/consistency}: every tracker's watermarks and digests, compared. */
  default CompletionStage<JsonNode> consistency() {
    return java.util.concurrent.CompletableFuture.completedFuture(
        com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode());
  }

  /** Debug: stop or resume applying KV event batches on this node's tracker. */
  default void pauseEvents(boolean paused) {}

  /** Debug: corrupt this node's tracker state of {@code replicaId} at its current watermark. */
  default void diverge(String replicaId) {}
}
