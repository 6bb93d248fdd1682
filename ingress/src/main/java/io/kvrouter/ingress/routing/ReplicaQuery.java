package io.kvrouter.ingress.routing;

import io.kvrouter.protocol.keys.MediaPrompt;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * What the router needs to choose a replica: the model, the prompt's token ids and how many tokens
 * the request may generate; replicas already tried are excluded. The token array is not mutated
 * after construction.
 *
 * @param sessionKey the client's conversation or user key (for affinity), or null
 * @param pinnedReplica the replica holding the request's state (it must serve it while it is
 *     known), or null
 * @param requiredApi an API path the chosen engine must serve itself ({@code
 *     ReplicaInfo.RESPONSES_API}), or null for any
 * @param boundReplica the replica the session is bound to (a soft preference), or null
 * @param ttftTargetMillis what is left of the request's TTFT target, in milliseconds, or 0 for none
 * @param pool which replicas may serve it: {@link Pool#SERVE} for a request (or the decode hop of a
 *     disaggregated one), {@link Pool#PREFILL} for the prefill hop
 * @param cacheSalt the request's {@code cache_salt} (vLLM's: it enters the engine's hash of the
 *     prompt's first block, so a salted prompt shares no cached block with another salt's or an
 *     unsalted one), or null; it enters the router's block keys the same way
 * @param images a chat's images in prompt order ({@link MediaPrompt}): each enters the keys of the
 *     blocks its placeholder tokens overlap, as in the engine's hash; empty for none
 * @param busyHeadroom requests a replica may hold beyond its busy threshold for this one (its
 *     tenant is below its fair share while others wait: {@code AdmissionQueue#headroom}); 0 for
 *     none
 * @param opensSession whether the query opens its session: it has a session key that no replica is
 *     bound to yet ({@code SessionRouter}), so the session's later turns will follow this decision
 */
public record ReplicaQuery(
    String requestId,
    String model,
    int[] tokenIds,
    int maxTokens,
    Set<String> excluded,
    String sessionKey,
    String pinnedReplica,
    String requiredApi,
    String boundReplica,
    double ttftTargetMillis,
    Pool pool,
    String cacheSalt,
    List<MediaPrompt.Image> images,
    int busyHeadroom,
    boolean opensSession) {

  /** The replicas a query may choose among, by their role ({@code ReplicaInfo.role}). */
  public enum Pool {
    /** Replicas that decode: role {@code both} or {@code decode}. */
    SERVE,
    /** Replicas that prefill for others: role {@code both} or {@code prefill}. */
    PREFILL
  }

  public ReplicaQuery {
    excluded = Set.copyOf(excluded);
    pool = pool == null ? Pool.SERVE : pool;
    images = images == null ? List.of() : List.copyOf(images);
  }

  /** A query served by the replicas that decode, without a session binding or TTFT target. */
  public ReplicaQuery(
      String requestId,
      String model,
      int[] tokenIds,
      int maxTokens,
      Set<String> excluded,
      String sessionKey,
      String pinnedReplica,
      String requiredApi) {
    this(
        requestId,
        model,
        tokenIds,
        maxTokens,
        excluded,
        sessionKey,
        pinnedReplica,
        requiredApi,
        null,
        0,
        Pool.SERVE,
        null,
        List.of(),
        0,
        false);
  }

  /** A query with no session key, pin or required API. */
  public ReplicaQuery(
      String requestId, String model, int[] tokenIds, int maxTokens, Set<String> excluded) {
    this(requestId, model, tokenIds, maxTokens, excluded, null, null, null);
  }

  /** The same query with other replicas excluded. */
  public ReplicaQuery withExcluded(Set<String> others) {
    return with(b -> b.excluded = others);
  }

  /** The same query preferring {@code replica}, the session's (null: none). */
  public ReplicaQuery withBoundReplica(String replica) {
    return with(b -> b.boundReplica = replica);
  }

  /** The same query pinned to {@code replica} (null: none): it must run there while it is known. */
  public ReplicaQuery withPinnedReplica(String replica) {
    return with(b -> b.pinnedReplica = replica);
  }

  /** The same query opening its session, or not. */
  public ReplicaQuery withOpensSession(boolean opens) {
    return with(b -> b.opensSession = opens);
  }

  /** The same query with {@code millis} left of its TTFT target (0: none). */
  public ReplicaQuery withTtftTarget(double millis) {
    return with(b -> b.ttftTargetMillis = millis);
  }

  /** The same query for {@code pool}'s replicas (null: {@link Pool#SERVE}). */
  public ReplicaQuery withPool(Pool pool) {
    return with(b -> b.pool = pool);
  }

  /** The same query with the request's {@code cache_salt} (null: none). */
  public ReplicaQuery withCacheSalt(String salt) {
    return with(b -> b.cacheSalt = salt);
  }

  /** The same query with the chat's images (empty: none). */
  public ReplicaQuery withImages(List<MediaPrompt.Image> list) {
    return with(b -> b.images = list);
  }

  /** The same query allowed {@code requests} beyond a replica's busy threshold (0: none). */
  public ReplicaQuery withBusyHeadroom(int requests) {
    return with(b -> b.busyHeadroom = requests);
  }

  /** Returns a copy with {@code change} applied to the builder of its components. */
  private ReplicaQuery with(Consumer<Builder> change) {
    Builder b = new Builder(this);
    change.accept(b);
    return b.build();
  }

  /** The components of a {@link ReplicaQuery}, for the withers to change one. */
  private static final class Builder {
    private final ReplicaQuery q;
    private Set<String> excluded;
    private String pinnedReplica;
    private String boundReplica;
    private double ttftTargetMillis;
    private Pool pool;
    private String cacheSalt;
    private List<MediaPrompt.Image> images;
    private int busyHeadroom;
    private boolean opensSession;

    private Builder(ReplicaQuery q) {
      this.q = q;
      excluded = q.excluded;
      pinnedReplica = q.pinnedReplica;
      boundReplica = q.boundReplica;
      ttftTargetMillis = q.ttftTargetMillis;
      pool = q.pool;
      cacheSalt = q.cacheSalt;
      images = q.images;
      busyHeadroom = q.busyHeadroom;
      opensSession = q.opensSession;
    }

    private ReplicaQuery build() {
      return new ReplicaQuery(
          q.requestId,
          q.model,
          q.tokenIds,
          q.maxTokens,
          excluded,
          q.sessionKey,
          pinnedReplica,
          q.requiredApi,
          boundReplica,
          ttftTargetMillis,
          pool,
          cacheSalt,
          images,
          busyHeadroom,
          opensSession);
    }
  }
}
