package io.kvrouter.tracker.ledger;

import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * A {@link LoadView} that counts at least the requests strict mode's admission gates reported on
 * some replicas. When a replica's gate turns a decision away, it says how many requests it holds;
 * the router's own ledger may not have heard of all of them yet (their reservations are still on
 * their way from the other ingresses). Deciding again on the ledger alone would judge that replica
 * by the load it had before, and excluding it instead would pass over it even once it is again the
 * least loaded (the herding burst's 4 against 2). So the decision sees each such replica with the
 * gate's count: the requests the ledger lacks are counted in flight, with prompts of the request
 * being placed not yet prefilled (they were admitted a moment ago), so the policy's cost rises with
 * them as it would had their reservations arrived.
 *
 * <p>Where the ledger already counts as many or more, the ledger stands. Cost: O(1) per call plus
 * O(floors) to build. Not thread-safe: built per decision.
 */
public final class GateFloors extends ForwardingLoadView {

  private final int[] floor;
  private final long promptTokens;

  /**
   * @param ledger the router's view
   * @param floors requests held per replica target id, as the gates reported them
   * @param index a target id's replica index, negative when unknown here
   * @param promptTokens the prompt tokens each missing request is counted with
   */
  public GateFloors(
      LoadView ledger, Map<String, Integer> floors, ToIntFunction<String> index, int promptTokens) {
    super(ledger);
    this.promptTokens = promptTokens;
    int size = 0;
    int[] at = new int[floors.size()];
    int[] count = new int[floors.size()];
    int n = 0;
    for (Map.Entry<String, Integer> e : floors.entrySet()) {
      int replica = index.applyAsInt(e.getKey());
      if (replica >= 0) {
        at[n] = replica;
        count[n++] = e.getValue();
        size = Math.max(size, replica + 1);
      }
    }
    this.floor = new int[size];
    for (int i = 0; i < n; i++) {
      floor[at[i]] = count[i];
    }
  }

  /** Requests the gate reported on {@code replica} (0 when it reported none). */
  public int floor(int replica) {
    return replica < floor.length ? floor[replica] : 0;
  }

  /** Requests the gate reported on {@code replica} beyond what the ledger counts there. */
  public int missing(int replica) {
    return replica < floor.length ? Math.max(0, floor[replica] - inner.inFlight(replica)) : 0;
  }

  @Override
  public int inFlight(int replica) {
    return inner.inFlight(replica) + missing(replica);
  }

  @Override
  public long prefillTokens(int replica) {
    return inner.prefillTokens(replica) + missing(replica) * promptTokens;
  }

  @Override
  public long activeTokens(int replica) {
    return inner.activeTokens(replica) + missing(replica) * promptTokens;
  }
}
