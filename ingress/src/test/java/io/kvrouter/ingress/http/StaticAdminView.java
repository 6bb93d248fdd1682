package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** An admin view for HTTP tests: always ready, no replicas. */
public final class StaticAdminView implements AdminView {

  @Override
  public CompletionStage<JsonNode> replicas() {
    return CompletableFuture.completedFuture(JsonNodeFactory.instance.arrayNode());
  }

  @Override
  public CompletionStage<Boolean> ready() {
    return CompletableFuture.completedFuture(true);
  }
}
