package io.kvrouter.protocol;

import java.util.Objects;

/**
 * A router will decide a request it holds at {@code decideAtMillis} (its wall clock): its peers
 * place it ahead of their own later decisions, where it would cost least, so requests that reach
 * different routers in one instant are decided as one router would decide them. The peers read the
 * prompt through the origin's eyes: its uncached tokens on each replica that holds part of it
 * ({@code replicaIds[i]} must still prefill {@code uncachedTokens[i]}); on any other replica that
 * serves {@code model} all {@code promptTokens}. Its reservation, when it comes, ends it; peers
 * match the two by origin, prompt size and time (a compact reservation carries no request id).
 *
 * <p>Size as {@code KryoSerializer} writes it ({@code ReservationWireSizeTest}): 21 bytes plus the
 * model's characters, plus for each replica listed its id's characters and 2 (34 bytes for a model
 * of 13 characters and no holder, 48 with two holders named like {@code sim-0}). Sent to every
 * peer, only for requests held before their decision. The arrays are never mutated after the record
 * is built.
 *
 * @param origin the origin's member uid (see {@link IntentMessage#origin})
 * @param decideAtMillis when the origin will decide it (its wall clock)
 * @param model the model the request asks for: its candidates are the replicas serving it
 * @param promptTokens the prompt's tokens
 * @param replicaIds replicas that hold a prefix of the prompt, by target id
 * @param uncachedTokens the tokens each of them must still prefill
 */
public record RouteIntent(
    long origin,
    long decideAtMillis,
    String model,
    int promptTokens,
    String[] replicaIds,
    int[] uncachedTokens)
    implements IntentMessage {

  public RouteIntent {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(replicaIds, "replicaIds");
    Objects.requireNonNull(uncachedTokens, "uncachedTokens");
    if (replicaIds.length != uncachedTokens.length) {
      throw new IllegalArgumentException(
          "one uncached count per replica: "
              + replicaIds.length
              + " replicas, "
              + uncachedTokens.length
              + " counts");
    }
    if (promptTokens < 0) {
      throw new IllegalArgumentException("promptTokens must be >= 0");
    }
  }

  @Override
  public RouteIntent from(long uid) {
    return new RouteIntent(uid, decideAtMillis, model, promptTokens, replicaIds, uncachedTokens);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RouteIntent r
        && origin == r.origin
        && decideAtMillis == r.decideAtMillis
        && promptTokens == r.promptTokens
        && model.equals(r.model)
        && java.util.Arrays.equals(replicaIds, r.replicaIds)
        && java.util.Arrays.equals(uncachedTokens, r.uncachedTokens);
  }

  @Override
  public int hashCode() {
    return Objects.hash(origin, decideAtMillis, promptTokens, model);
  }

  @Override
  public String toString() {
    return "RouteIntent["
        + Long.toHexString(origin)
        + " at "
        + decideAtMillis
        + ", "
        + promptTokens
        + " tokens, "
        + replicaIds.length
        + " holders]";
  }
}
