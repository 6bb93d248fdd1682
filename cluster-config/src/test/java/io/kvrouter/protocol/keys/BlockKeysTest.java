package io.kvrouter.protocol.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.openhft.hashing.LongHashFunction;
import org.junit.jupiter.api.Test;

class BlockKeysTest {

  private static final BlockKeys QWEN = BlockKeys.of("Qwen/Qwen3-8B", 16);

  private static int[] oneTo(int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = i + 1;
    }
    return t;
  }

  @Test
  void xxh3Primitive_hashesLittleEndianWordsAsDynamosRouterDoes() {
    // Dynamo's local and sequence hashes (ai-dynamo/dynamo lib/kv-router/src/protocols.rs: XXH3-64
    // with seed 1337 over the block's tokens as u32 LE, then over the LE u64 pair) of tokens 1..32,
    // block 16, computed outside this project. Confirms the library hashes u32/u64 little-endian.
    LongHashFunction xx3 = LongHashFunction.xx3(1337);
    int[] t = oneTo(32);
    long local0 = xx3.hashInts(t, 0, 16);
    long local1 = xx3.hashInts(t, 16, 16);
    assertThat(Long.toUnsignedString(local0)).isEqualTo("16863443419780771464");
    assertThat(Long.toUnsignedString(local1)).isEqualTo("2287610619914608821");
    assertThat(Long.toUnsignedString(xx3.hashLongs(new long[] {local0, local1})))
        .isEqualTo("12466389667045779788");
  }

  @Test
  void keys_arePinnedByTestVectors() {
    int[] t = oneTo(32);
    assertThat(QWEN.keys(t)).containsExactly(0x76aaf018fad9b14eL, 0x2bd8a5d6c274ce32L);
    assertThat(QWEN.keys(t, ExtraKeys.of("adapter-a", null)))
        .containsExactly(0xadadb962d0d9642cL, 0x28e385b914dfdb2fL);
    assertThat(QWEN.keys(t, ExtraKeys.of(null, "salt-1")))
        .containsExactly(0xb7f0ad930121ba0aL, 0x941c9772ed580d99L);
  }

  @Test
  void onlyFullBlocksGetKeys() {
    assertThat(QWEN.keys(oneTo(15))).isEmpty();
    assertThat(QWEN.keys(oneTo(47))).hasSize(2);
    assertThat(QWEN.blockCount(47)).isEqualTo(2);
  }

  @Test
  void sharedPrefix_sharesKeysUntilTheFirstDifferentBlock() {
    int[] a = oneTo(64);
    int[] b = a.clone();
    b[40] = 999; // inside block 2
    long[] ka = QWEN.keys(a);
    long[] kb = QWEN.keys(b);
    assertThat(kb[0]).isEqualTo(ka[0]);
    assertThat(kb[1]).isEqualTo(ka[1]);
    assertThat(kb[2]).isNotEqualTo(ka[2]);
    assertThat(kb[3]).isNotEqualTo(ka[3]); // chained: the difference carries forward
  }

  @Test
  void sameBlockAtAnotherPosition_getsAnotherKey() {
    int[] t = new int[32];
    Arrays.fill(t, 7);
    long[] k = QWEN.keys(t);
    assertThat(k[0]).isNotEqualTo(k[1]);
  }

  @Test
  void modelAndBlockSize_separateKeySpaces() {
    int[] t = oneTo(64);
    assertThat(BlockKeys.of("other-model", 16).keys(t)[0]).isNotEqualTo(QWEN.keys(t)[0]);
    assertThat(BlockKeys.of("Qwen/Qwen3-8B", 32).keys(t)[0]).isNotEqualTo(QWEN.keys(t)[1]);
  }

  @Test
  void saltChangesFirstBlockAndHenceAll_loraAndSaltWithSameTextDiffer() {
    int[] t = oneTo(48);
    long[] plain = QWEN.keys(t);
    long[] salted = QWEN.keys(t, ExtraKeys.of(null, "x"));
    long[] lora = QWEN.keys(t, ExtraKeys.of("x", null));
    for (int i = 0; i < 3; i++) {
      assertThat(salted[i]).isNotEqualTo(plain[i]);
      assertThat(lora[i]).isNotEqualTo(plain[i]).isNotEqualTo(salted[i]);
    }
  }

  @Test
  void mediaItem_changesOnlyTheBlocksItOverlapsAndThoseAfter() {
    int[] t = oneTo(64);
    long[] plain = QWEN.keys(t);
    long[] media = QWEN.keys(t, ExtraKeys.NONE.withMedia(42L, 20, 8)); // block 1 only
    assertThat(media[0]).isEqualTo(plain[0]);
    assertThat(media[1]).isNotEqualTo(plain[1]);
    long[] otherImage = QWEN.keys(t, ExtraKeys.NONE.withMedia(43L, 20, 8));
    assertThat(otherImage[1]).isNotEqualTo(media[1]);
  }

  @Test
  void mediaItems_orderOfAddingDoesNotMatter() {
    int[] t = oneTo(64);
    ExtraKeys ab = ExtraKeys.NONE.withMedia(1L, 0, 20).withMedia(2L, 30, 10);
    ExtraKeys ba = ExtraKeys.NONE.withMedia(2L, 30, 10).withMedia(1L, 0, 20);
    assertThat(QWEN.keys(t, ab)).containsExactly(QWEN.keys(t, ba));
  }

  @Test
  void chain_continuesFromAParentKey_asAnAgentDoesForAnEngineEvent() {
    int[] t = oneTo(48);
    long[] all = QWEN.keys(t);
    assertThat(QWEN.chain(BlockKeys.ROOT, t, 0, 0L)).isEqualTo(all[0]);
    assertThat(QWEN.chain(all[0], t, 16, 0L)).isEqualTo(all[1]);
    assertThat(QWEN.chain(all[1], t, 32, 0L)).isEqualTo(all[2]);
    ExtraKeys lora = ExtraKeys.of("a", "s");
    long[] withExtras = QWEN.keys(t, lora);
    assertThat(QWEN.chain(withExtras[0], t, 16, lora.blockExtra(1, 16))).isEqualTo(withExtras[1]);
  }

  @Test
  void keysInto_writesIntoCallerArrayAndRejectsShortOnes() {
    int[] t = oneTo(40);
    long[] out = new long[4];
    assertThat(QWEN.keysInto(t, 40, ExtraKeys.NONE, out)).isEqualTo(2);
    assertThat(Arrays.copyOf(out, 2)).containsExactly(QWEN.keys(t));
    assertThat(QWEN.keysInto(t, 20, ExtraKeys.NONE, out)).isEqualTo(1);
    assertThatThrownBy(() -> QWEN.keysInto(t, 40, ExtraKeys.NONE, new long[1]))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BlockKeys.of("m", 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Property(tries = 200)
  void keys_areNeverRoot_andArePrefixStable(
      @ForAll @Size(min = 16, max = 200) int[] tokens,
      @ForAll @IntRange(min = 1, max = 32) int bs) {
    BlockKeys keys = BlockKeys.of("m", bs);
    long[] all = keys.keys(tokens);
    assertThat(all).doesNotContain(BlockKeys.ROOT);
    long[] prefix = keys.keys(Arrays.copyOf(tokens, tokens.length / 2));
    assertThat(Arrays.copyOf(all, prefix.length)).containsExactly(prefix);
  }
}
