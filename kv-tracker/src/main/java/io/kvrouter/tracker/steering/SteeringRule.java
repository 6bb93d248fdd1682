package io.kvrouter.tracker.steering;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.ledger.LoadView;
import java.util.Arrays;
import java.util.function.IntPredicate;

/**
 * Applies a request's {@link Steering} to the policy's ranking: first the LoRA adapter, then
 * session affinity, then the TTFT target. Plain Java, no state; the tracker calls it between
 * ranking and reserving.
 *
 * <p><b>LoRA adapter.</b> A request for an adapter runs only where the adapter is loaded; a replica
 * that lacks it must load it first (the ingress does, see {@code AdapterLoader}), which costs
 * {@code adapterLoadPenaltyTokens} of work. When the policy's first choice lacks the adapter, the
 * first holder in the policy's order that is not busy moves to the front unless its work exceeds
 * the first choice's by more than that penalty, with work as for affinity below:
 *
 * <pre>
 *   holder first  ⇔  ¬holds(first) ∧ ¬busy(holder) ∧ work(holder) − penalty ≤ work(first)
 * </pre>
 *
 * So without a cache match anywhere a holder wins (its uncached prefill equals the others'), a
 * cache match still wins (the block keys include the adapter, so only replicas that ran it can
 * match, and a matching first choice already holds it), and an adapter that is hot spreads: once
 * its holders are busy, or queued more than the penalty beyond the policy's choice, that replica
 * gets it loaded. The penalty is thus the threshold of "hot", in the same unit as the work.
 *
 * <p><b>Affinity.</b> The bound replica moves to the front when it is a candidate (known, serving
 * the model, not excluded), not busy, and its work is within {@code affinityBonusTokens} of the
 * policy's first choice, where a replica's work is the decision cost of the design (queue ahead
 * plus this request's uncached prefill, in tokens):
 *
 * <pre>
 *   work(r) = queuedPrefillTokens(r) + max(0, promptTokens − cachedTokens(r))
 *   bound first  ⇔  ¬busy(bound) ∧ work(bound) − bonus ≤ work(first)
 * </pre>
 *
 * So a conversation stays on its replica through near-ties and small load differences (where a
 * policy's random tie-breaking would move it), and leaves it when it is overloaded (busy) or when
 * another replica is cheaper by more than the bonus; a replica that left the cluster is simply no
 * candidate. The measure is policy-neutral on purpose: it means the same under every policy.
 *
 * <p><b>TTFT target.</b> With a target and a predictor, the first candidate in the (affinity-
 * adjusted) order that is not busy and whose predicted TTFT meets the target moves to the front.
 * When none meets it and the request asked for admission, the outcome is an SLO miss: nothing is
 * reserved and the caller queues or rejects, seeing each candidate's prediction and its floor (the
 * prediction on an idle replica: no wait can beat it). Without admission (the lab) the order
 * stands.
 *
 * <p>Cost: O(n) predictions over n candidates, one array copy.
 */
public final class SteeringRule {

  private SteeringRule() {}

  /**
   * The steered order.
   *
   * @param order candidates, the one to reserve first; the policy's ranking when nothing applied
   * @param predicted predicted TTFT in milliseconds, aligned with {@code order} (NaN without a
   *     predictor)
   * @param floor predicted TTFT on the same replica if it were idle, aligned with {@code order}
   * @param sloMiss true when no candidate meets the target (nothing may be reserved)
   */
  public record Steered(int[] order, double[] predicted, double[] floor, boolean sloMiss) {}

  /**
   * @param steering what the request asks (null or {@link Steering#NONE} for nothing)
   * @param bound the bound replica's index, or -1 when it has none or the replica is unknown
   * @param holds whether a replica has the request's LoRA adapter loaded (asked only when the
   *     steering names an adapter)
   * @param ranked the policy's ranking, best first (not modified)
   * @param promptTokens the prompt's length
   * @param blockSize tokens per block
   * @param match the index's match of the prompt
   * @param load every replica's load
   * @param busy whether a replica is over its busy threshold
   * @param admission whether the request may be refused (queued) rather than placed anyway
   */
  public static Steered apply(
      Steering steering,
      int bound,
      IntPredicate holds,
      int[] ranked,
      int promptTokens,
      int blockSize,
      MatchResult match,
      LoadView load,
      IntPredicate busy,
      boolean admission) {
    int n = ranked.length;
    int[] order = ranked.clone();
    double[] predicted = new double[n];
    double[] floor = new double[n];
    Arrays.fill(predicted, Double.NaN);
    Arrays.fill(floor, Double.NaN);
    if (steering == null) {
      return new Steered(order, predicted, floor, false);
    }
    if (steering.hasAdapter() && n > 1 && !holds.test(order[0])) {
      for (int i = 1; i < n; i++) {
        int h = order[i];
        if (holds.test(h) && !busy.test(h)) {
          if (work(h, promptTokens, blockSize, match, load) - steering.adapterLoadPenaltyTokens()
              <= work(order[0], promptTokens, blockSize, match, load)) {
            moveToFront(order, predicted, floor, i);
          }
          break;
        }
      }
    }
    if (bound >= 0 && steering.boundReplica() != null) {
      int pos = indexOf(order, bound);
      if (pos > 0
          && !busy.test(bound)
          && work(bound, promptTokens, blockSize, match, load) - steering.affinityBonusTokens()
              <= work(order[0], promptTokens, blockSize, match, load)) {
        moveToFront(order, predicted, floor, pos);
      }
    }
    TtftPredictor predictor = steering.predictor();
    if (predictor != null) {
      LoadView idle = new IdleLoad(load);
      for (int i = 0; i < n; i++) {
        int uncached = uncached(order[i], promptTokens, blockSize, match);
        predicted[i] = predictor.ttftMillis(order[i], uncached, load);
        floor[i] = predictor.ttftMillis(order[i], uncached, idle);
      }
    }
    if (steering.hasTarget()) {
      int pos = -1;
      for (int i = 0; i < n && pos < 0; i++) {
        if (!busy.test(order[i]) && predicted[i] <= steering.ttftTargetMillis()) {
          pos = i;
        }
      }
      if (pos < 0) {
        return new Steered(order, predicted, floor, admission);
      }
      moveToFront(order, predicted, floor, pos);
    }
    return new Steered(order, predicted, floor, false);
  }

  /** Prompt tokens {@code replica} is not predicted to hold. */
  static int uncached(int replica, int promptTokens, int blockSize, MatchResult match) {
    long cached = Math.min((long) match.matched(replica) * blockSize, promptTokens);
    return (int) (promptTokens - cached);
  }

  private static double work(
      int replica, int promptTokens, int blockSize, MatchResult match, LoadView load) {
    return load.prefillTokens(replica) + (double) uncached(replica, promptTokens, blockSize, match);
  }

  private static int indexOf(int[] order, int replica) {
    for (int i = 0; i < order.length; i++) {
      if (order[i] == replica) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Moves entry {@code pos} of the three aligned arrays to the front, keeping the others' order.
   */
  private static void moveToFront(int[] order, double[] predicted, double[] floor, int pos) {
    int r = order[pos];
    double p = predicted[pos];
    double f = floor[pos];
    System.arraycopy(order, 0, order, 1, pos);
    System.arraycopy(predicted, 0, predicted, 1, pos);
    System.arraycopy(floor, 0, floor, 1, pos);
    order[0] = r;
    predicted[0] = p;
    floor[0] = f;
  }

  /** A replica's load as if it had nothing queued or running (the same ids). */
  private record IdleLoad(LoadView real) implements LoadView {
    @Override
    public String id(int replica) {
      return real.id(replica);
    }

    @Override
    public int inFlight(int replica) {
      return 0;
    }

    @Override
    public long prefillTokens(int replica) {
      return 0;
    }

    @Override
    public long decodeTokens(int replica) {
      return 0;
    }

    @Override
    public long activeTokens(int replica) {
      return 0;
    }

    @Override
    public int waiting(int replica) {
      return 0;
    }

    @Override
    public int running(int replica) {
      return 0;
    }

    @Override
    public double kvUsage(int replica) {
      return 0;
    }
  }
}
