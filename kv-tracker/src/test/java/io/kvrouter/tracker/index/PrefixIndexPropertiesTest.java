package io.kvrouter.tracker.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Holds {@link PrefixIndex} against {@link ReferenceIndex} under random sequences of store, remove,
 * clear, drop, predict, expire and match, with duplicated operations, and checks that digests are a
 * function of the state and tell different states apart.
 */
class PrefixIndexPropertiesTest {

  static final int REPLICAS = 5;
  static final int KEYS = 24;

  /** Keys 1..KEYS so that blocks collide across replicas and operations. */
  private static Arbitrary<Long> key() {
    return Arbitraries.longs().between(1, KEYS);
  }

  /** Engine hash of a key: usually a function of it, sometimes another (a reused hash), or 0. */
  static long engineHash(long key, int variant) {
    return switch (variant) {
      case 0 -> 0L;
      case 1 -> key * 1_000_003L + 7;
      default -> key * 7_919L;
    };
  }

  private static Arbitrary<Tier> tier() {
    return Arbitraries.of(Tier.GPU, Tier.GPU, Tier.CPU, Tier.DISK);
  }

  static Arbitrary<Integer> replica() {
    return Arbitraries.integers().between(0, REPLICAS - 1);
  }

  static Arbitrary<IndexOp> store() {
    return Combinators.combine(
            replica(),
            key().list().ofMinSize(1).ofMaxSize(6),
            Arbitraries.integers().between(0, 9).list().ofSize(6),
            tier())
        .as(
            (r, keys, variants, tier) -> {
              long[] k = keys.stream().mapToLong(Long::longValue).toArray();
              long[] h = new long[k.length];
              for (int i = 0; i < k.length; i++) {
                h[i] = engineHash(k[i], variants.get(i) == 0 ? 0 : variants.get(i) == 1 ? 1 : 2);
              }
              return new IndexOp.Store(r, new BlocksStored(BlocksStored.ROOT, h, k, tier));
            });
  }

  static Arbitrary<IndexOp> remove() {
    return Combinators.combine(
            replica(),
            key().list().ofMinSize(1).ofMaxSize(6),
            Arbitraries.integers().between(0, 2),
            tier())
        .as(
            (r, keys, variant, tier) ->
                new IndexOp.Remove(
                    r,
                    new BlocksRemoved(
                        keys.stream().mapToLong(k -> engineHash(k, variant)).toArray(), tier)));
  }

  private static Arbitrary<IndexOp> predict() {
    return Combinators.combine(
            replica(), key().list().ofMinSize(1).ofMaxSize(6), Arbitraries.longs().between(0, 20))
        .as(
            (r, keys, ttl) ->
                new IndexOp.Predict(r, keys.stream().mapToLong(Long::longValue).toArray(), ttl));
  }

  @Provide
  Arbitrary<List<IndexOp>> ops() {
    Arbitrary<IndexOp> op =
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(10, store()),
            net.jqwik.api.Tuple.of(6, remove()),
            net.jqwik.api.Tuple.of(1, replica().map(IndexOp.Clear::new)),
            net.jqwik.api.Tuple.of(1, replica().map(IndexOp.Drop::new)),
            net.jqwik.api.Tuple.of(3, predict()),
            net.jqwik.api.Tuple.of(2, Arbitraries.longs().between(0, 8).map(IndexOp.Expire::new)));
    return op.list().ofMaxSize(80).map(PrefixIndexPropertiesTest::withClock);
  }

  /** Turns relative times (predict ttl, expire step) into one monotone clock. */
  private static List<IndexOp> withClock(List<IndexOp> raw) {
    List<IndexOp> out = new ArrayList<>();
    long now = 0;
    for (IndexOp op : raw) {
      if (op instanceof IndexOp.Expire e) {
        now += e.now();
        out.add(new IndexOp.Expire(now));
      } else if (op instanceof IndexOp.Predict p) {
        out.add(new IndexOp.Predict(p.replica(), p.keys(), now + p.deadline()));
      } else {
        out.add(op);
      }
    }
    return out;
  }

  @Provide
  Arbitrary<List<long[]>> prompts() {
    return key()
        .list()
        .ofMinSize(1)
        .ofMaxSize(8)
        .map(l -> l.stream().mapToLong(Long::longValue).toArray())
        .list()
        .ofSize(6);
  }

  @Property(tries = 400)
  void index_agreesWithReferenceModel_includingDuplicatedOperations(
      @ForAll("ops") List<IndexOp> ops,
      @ForAll("prompts") List<long[]> prompts,
      @ForAll java.util.Random random) {
    agreesWithReferenceModel(new PrefixIndex(4), ops, prompts, random);
  }

  /**
   * The same with runs of two blocks in the run summary, so prompts of up to eight keys are matched
   * through claims made by earlier matches of the same prompts (and the small summary tables of a
   * four-block index evict claims all the time).
   */
  @Property(tries = 400)
  void index_withRunClaimsOfTwoBlocks_agreesWithReferenceModel(
      @ForAll("ops") List<IndexOp> ops,
      @ForAll("prompts") List<long[]> prompts,
      @ForAll java.util.Random random) {
    agreesWithReferenceModel(new PrefixIndex(4, 0L, 2), ops, prompts, random);
  }

  private static void agreesWithReferenceModel(
      PrefixIndex index, List<IndexOp> ops, List<long[]> prompts, java.util.Random random) {
    ReferenceIndex model = new ReferenceIndex();
    MatchResult match = new MatchResult();
    for (IndexOp op : ops) {
      op.apply(index);
      op.apply(model);
      if (random.nextInt(4) == 0) {
        op.apply(index); // a duplicate delivery changes nothing
      }
      long[] prompt = prompts.get(random.nextInt(prompts.size()));
      assertMatchesModel(index, model, match, prompt);
    }
    for (int r = 0; r < REPLICAS; r++) {
      assertThat(index.digest(r)).isEqualTo(rebuilt(model.state(r), r).digest(r));
    }
  }

  private static void assertMatchesModel(
      PrefixIndex index, ReferenceIndex model, MatchResult match, long[] prompt) {
    index.match(prompt, prompt.length, match);
    int longest = 0;
    for (int r = 0; r < REPLICAS; r++) {
      int[] expected = model.match(r, prompt);
      int[] actual = {
        match.matched(r),
        match.gpu(r),
        match.predicted(r),
        match.cpu(r),
        match.disk(r),
        match.gpuLeading(r)
      };
      assertThat(actual)
          .as("replica %d on %s", r, java.util.Arrays.toString(prompt))
          .containsExactly(expected);
      longest = Math.max(longest, expected[0]);
    }
    assertThat(match.longest()).isEqualTo(longest);
  }

  /** A fresh index holding exactly {@code state} for replica {@code r}, built in key order. */
  static PrefixIndex rebuilt(Map<Long, Set<Tier>> state, int r) {
    PrefixIndex fresh = new PrefixIndex(4);
    state.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(
            e -> {
              for (Tier t : e.getValue()) {
                fresh.store(
                    r,
                    new BlocksStored(
                        BlocksStored.ROOT,
                        new long[] {e.getKey() * 31 + t.ordinal()},
                        new long[] {e.getKey()},
                        t));
              }
            });
    return fresh;
  }

  @Property(tries = 300)
  void digestsAreEqual_exactlyWhenStatesAreEqual(
      @ForAll("ops") List<IndexOp> a, @ForAll("ops") List<IndexOp> b, @ForAll boolean shareOps) {
    List<IndexOp> second = shareOps ? withDuplicates(a) : b;
    PrefixIndex ia = new PrefixIndex(4);
    PrefixIndex ib = new PrefixIndex(4);
    ReferenceIndex ma = new ReferenceIndex();
    ReferenceIndex mb = new ReferenceIndex();
    a.forEach(
        op -> {
          op.apply(ia);
          op.apply(ma);
        });
    second.forEach(
        op -> {
          op.apply(ib);
          op.apply(mb);
        });
    for (int r = 0; r < REPLICAS; r++) {
      boolean sameState = ma.state(r).equals(mb.state(r));
      assertThat(ia.digest(r).equals(ib.digest(r))).as("replica %d", r).isEqualTo(sameState);
    }
  }

  private static List<IndexOp> withDuplicates(List<IndexOp> ops) {
    List<IndexOp> out = new ArrayList<>();
    for (int i = 0; i < ops.size(); i++) {
      out.add(ops.get(i));
      if (i % 3 == 0) {
        out.add(ops.get(i));
      }
    }
    return out;
  }

  @Property(tries = 100)
  void drop_leavesNoTraceOfTheReplica(@ForAll("ops") List<IndexOp> ops) {
    PrefixIndex index = new PrefixIndex(4);
    ops.forEach(op -> op.apply(index));
    for (int r = 0; r < REPLICAS; r++) {
      index.dropReplica(r);
    }
    assertThat(index.nodes()).isZero();
    assertThat(index.predictedRuns()).isZero();
    for (int r = 0; r < REPLICAS; r++) {
      assertThat(index.digest(r)).isEqualTo(ReplicaDigest.EMPTY);
      assertThat(index.bridgeSize(r)).isZero();
    }
  }
}
