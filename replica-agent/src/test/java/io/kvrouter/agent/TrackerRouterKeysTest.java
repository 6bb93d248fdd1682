package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.protocol.keys.BlockKeys;
import java.util.Arrays;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class TrackerRouterKeysTest {

  @Test
  void agentKeysChainedAcrossEvents_equalTheKeysTheIngressComputesForTheWholePrompt() {
    int[] prompt = IntStream.range(0, 16 * 5 + 3).map(i -> (i * 7919) % 151_000).toArray();
    long[] ingress = BlockKeys.of("m", 16).keys(prompt);

    TrackerRouterKeys agent = new TrackerRouterKeys("m");
    // The engine announces the first two blocks in one event and the next three in another.
    long[] first = agent.keys(BlockKeys.ROOT, Arrays.copyOfRange(prompt, 0, 32), 16, null);
    long[] rest = agent.keys(first[1], Arrays.copyOfRange(prompt, 32, 80), 16, null);

    assertThat(first).containsExactly(ingress[0], ingress[1]);
    assertThat(rest).containsExactly(ingress[2], ingress[3], ingress[4]);
  }

  @Test
  void differentModelsOrAdapters_giveDifferentKeys() {
    int[] block = IntStream.range(0, 16).toArray();
    long plain = new TrackerRouterKeys("m").keys(BlockKeys.ROOT, block, 16, null)[0];
    assertThat(new TrackerRouterKeys("other").keys(BlockKeys.ROOT, block, 16, null)[0])
        .isNotEqualTo(plain);
    assertThat(new TrackerRouterKeys("m").keys(BlockKeys.ROOT, block, 16, "lora-a")[0])
        .isNotEqualTo(plain);
  }
}
