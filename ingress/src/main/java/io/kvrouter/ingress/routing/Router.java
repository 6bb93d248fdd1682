package io.kvrouter.ingress.routing;

import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The ingress's view of its tracker: one select-and-reserve per attempt, then the lifecycle of that
 * reservation. Each reservation must see {@link #released} exactly once, and {@link
 * #prefillCompleted} at most once before it.
 */
public interface Router {

  /** Selects the best replica for the query and reserves it atomically. */
  CompletionStage<RouteOutcome> selectAndReserve(ReplicaQuery query);

  /** The first token of the reservation's request arrived. */
  void prefillCompleted(String reservationId);

  /** The request ended (done, error, timeout, client gone); all its load is returned. */
  void released(String reservationId);

  /** Models some replica serves right now: base models and the LoRA adapters loaded on them. */
  Set<String> servedModels();

  /**
   * The base model of {@code model}: the model of the replicas a LoRA adapter is loaded on (its
   * requests are tokenized as that model's), else {@code model} itself. Not a default method, for
   * the reason {@link #disaggregated} gives.
   */
  String baseModel(String model);

  /**
   * True when {@code model} has prefill replicas, so its requests go prefill then decode
   * (disaggregation) unless short enough to skip the prefill hop. Not a default method: a router
   * that wraps another must pass it on (a wrapper that answered false turned disaggregation off).
   */
  boolean disaggregated(String model);
}
