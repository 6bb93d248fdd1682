package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.CompletionStage;

/** Read-only views the admin endpoints serve, gathered from the node's tracker. */
public interface AdminView {

  /** {@code GET /admin/replicas}: per replica its model, URL, load and blocks held. */
  CompletionStage<JsonNode> replicas();

  /** True when the node's tracker is ready to route (caught up with the cluster). */
  boolean ready();
}
