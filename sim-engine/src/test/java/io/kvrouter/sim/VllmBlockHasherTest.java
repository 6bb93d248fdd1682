package io.kvrouter.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class VllmBlockHasherTest {

  private final VllmBlockHasher hasher = new VllmBlockHasher("0");
  private final int[] tokens = IntStream.rangeClosed(1, 32).toArray();

  @Test
  void noneHash_matchesSpecVectorForSeedZero() {
    assertThat(HexFormat.of().formatHex(hasher.noneHash()))
        .startsWith("4e1195df")
        .endsWith("f2e61c3e");
  }

  @Test
  void chainedBlocks_matchSha256CborVectors() {
    byte[] d0 = hasher.blockDigest(null, tokens, 0, 16, List.of());
    assertThat(HexFormat.of().formatHex(d0))
        .isEqualTo("202da172482d928bbc42ab25b0151e2b895f13f41002e27b2ceabcfae6d332ea");
    assertThat(VllmBlockHasher.low64(d0)).isEqualTo(3236607068019569386L);
    byte[] d1 = hasher.blockDigest(d0, tokens, 16, 16, List.of());
    assertThat(VllmBlockHasher.low64(d1)).isEqualTo(2758186210834249151L);
  }

  @Test
  void extraKeysAndSeed_changeTheHash() {
    long plain = VllmBlockHasher.low64(hasher.blockDigest(null, tokens, 0, 16, List.of()));
    long lora = VllmBlockHasher.low64(hasher.blockDigest(null, tokens, 0, 16, List.of("a")));
    long seeded =
        VllmBlockHasher.low64(new VllmBlockHasher("1").blockDigest(null, tokens, 0, 16, List.of()));
    assertThat(lora).isNotEqualTo(plain);
    assertThat(seeded).isNotEqualTo(plain);
  }
}
