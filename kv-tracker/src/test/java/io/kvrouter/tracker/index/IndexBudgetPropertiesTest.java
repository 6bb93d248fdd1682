package io.kvrouter.tracker.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.Tier;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/**
 * An index under a memory budget, held against the unbounded {@link ReferenceIndex}: after every
 * operation its content stays within the budget, it never claims a block the engines did not report
 * (eviction only forgets), a replica the budget never trimmed is exactly the reference's, digests
 * are those of what the index still holds, and nothing leaks (once the engines remove everything,
 * no node and no bridge entry remains). The index has runs of two blocks in its run summary and
 * matches the stored prompts again, so claims are made, serve matches and meet evictions: a match
 * reports exactly what the index still holds (a claim never outlives an evicted block).
 */
class IndexBudgetPropertiesTest {

  private static final int REPLICAS = PrefixIndexPropertiesTest.REPLICAS;

  @Provide
  Arbitrary<List<IndexOp>> ops() {
    return Arbitraries.frequencyOf(
            Tuple.of(10, PrefixIndexPropertiesTest.store().map(IndexBudgetPropertiesTest::oneHash)),
            Tuple.of(4, PrefixIndexPropertiesTest.remove().map(IndexBudgetPropertiesTest::oneHash)),
            Tuple.of(1, PrefixIndexPropertiesTest.replica().map(IndexOp.Clear::new)),
            Tuple.of(1, PrefixIndexPropertiesTest.replica().map(IndexOp.Drop::new)))
        .list()
        .ofMaxSize(120);
  }

  @Property(tries = 200)
  void underABudget_theIndexOnlyForgets_andTrimmedReplicasAreTheOnlyInexactOnes(
      @ForAll("ops") List<IndexOp> ops,
      @ForAll @IntRange(min = 6, max = 30) int budgetNodes,
      @ForAll java.util.Random random) {
    long budget = budgetNodes * (long) (IndexBudget.NODE_BYTES + IndexBudget.HOLDING_BYTES);
    PrefixIndex index = new PrefixIndex(4, budget, 2);
    ReferenceIndex model = new ReferenceIndex();
    MatchResult match = new MatchResult();
    List<long[]> storedPrompts = new java.util.ArrayList<>();
    for (IndexOp op : ops) {
      op.apply(index);
      op.apply(model);
      if (op instanceof IndexOp.Store st) {
        storedPrompts.add(st.event().blockKeys());
      }
      // Matches move the access clock, as routing does between engine events.
      long[] prompt = {1 + random.nextInt(PrefixIndexPropertiesTest.KEYS)};
      index.match(prompt, 1, match);
      if (!storedPrompts.isEmpty()) {
        long[] again = storedPrompts.get(random.nextInt(storedPrompts.size()));
        index.match(again, again.length, match);
        index.match(again, again.length, match); // through the claims the first match made
        assertMatchesWhatIsHeld(index, match, again);
      }

      assertThat(index.estimatedBytes()).as("after %s", op).isLessThanOrEqualTo(budget);
      for (int r = 0; r < REPLICAS; r++) {
        Map<Long, Set<Tier>> held = held(index, r);
        Map<Long, Set<Tier>> truth = model.state(r);
        held.forEach(
            (key, tiers) -> assertThat(truth.getOrDefault(key, Set.of())).containsAll(tiers));
        if (index.evicted(r) == 0) {
          assertThat(held).as("untrimmed replica %d after %s", r, op).isEqualTo(truth);
        }
        assertThat(index.digest(r))
            .as("digest of what replica %d still holds", r)
            .isEqualTo(PrefixIndexPropertiesTest.rebuilt(held, r).digest(r));
      }
    }
    long bridgeEntries = 0;
    for (int r = 0; r < REPLICAS; r++) {
      bridgeEntries += index.bridgeSize(r);
    }
    assertThat(index.holdings()).isEqualTo(bridgeEntries);

    for (int r = 0; r < REPLICAS; r++) {
      long[] hashes = new long[PrefixIndexPropertiesTest.KEYS];
      for (int k = 0; k < hashes.length; k++) {
        hashes[k] = PrefixIndexPropertiesTest.engineHash(k + 1, 2);
      }
      for (Tier t : Tier.values()) {
        index.remove(r, new BlocksRemoved(hashes, t));
      }
      assertThat(index.bridgeSize(r)).isZero();
    }
    assertThat(index.nodes()).isZero();
    assertThat(index.holdings()).isZero();
  }

  /** The same operation with every block hashed one way (variant 2 of the index tests). */
  private static IndexOp oneHash(IndexOp op) {
    if (op instanceof IndexOp.Store st) {
      long[] keys = st.event().blockKeys();
      long[] hashes = new long[keys.length];
      for (int i = 0; i < keys.length; i++) {
        hashes[i] = PrefixIndexPropertiesTest.engineHash(keys[i], 2);
      }
      return new IndexOp.Store(
          st.replica(),
          new io.kvrouter.protocol.BlocksStored(
              io.kvrouter.protocol.BlocksStored.ROOT, hashes, keys, st.event().tier()));
    }
    IndexOp.Remove rm = (IndexOp.Remove) op;
    long[] hashes = rm.event().engineHashes().clone();
    for (int i = 0; i < hashes.length; i++) {
      long key = hashes[i] % 7_919 == 0 ? hashes[i] / 7_919 : 1 + Math.floorMod(hashes[i], 24);
      hashes[i] = PrefixIndexPropertiesTest.engineHash(key, 2);
    }
    return new IndexOp.Remove(rm.replica(), new BlocksRemoved(hashes, rm.event().tier()));
  }

  /** Each replica matched exactly the prompt's leading blocks the index still holds of it. */
  private static void assertMatchesWhatIsHeld(PrefixIndex index, MatchResult match, long[] prompt) {
    for (int r = 0; r < REPLICAS; r++) {
      int leading = 0;
      int gpu = 0;
      while (leading < prompt.length) {
        boolean any = false;
        for (Tier t : Tier.values()) {
          any |= index.holds(r, prompt[leading], t);
        }
        if (!any) {
          break;
        }
        gpu += index.holds(r, prompt[leading], Tier.GPU) ? 1 : 0;
        leading++;
      }
      assertThat(new int[] {match.matched(r), match.gpu(r)})
          .as("replica %d on %s", r, java.util.Arrays.toString(prompt))
          .containsExactly(leading, gpu);
    }
  }

  private static Map<Long, Set<Tier>> held(PrefixIndex index, int r) {
    Map<Long, Set<Tier>> out = new HashMap<>();
    for (long key = 1; key <= PrefixIndexPropertiesTest.KEYS; key++) {
      EnumSet<Tier> tiers = EnumSet.noneOf(Tier.class);
      for (Tier t : Tier.values()) {
        if (index.holds(r, key, t)) {
          tiers.add(t);
        }
      }
      if (!tiers.isEmpty()) {
        out.put(key, tiers);
      }
    }
    return out;
  }
}
