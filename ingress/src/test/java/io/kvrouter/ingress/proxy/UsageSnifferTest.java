package io.kvrouter.ingress.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

/**
 * {@link UsageSniffer} on streams as engines chunk them: the usage chunk whole, split anywhere
 * (inside a field name, between name and number), after many chunks without usage, and a stream
 * without usage at all.
 */
class UsageSnifferTest {

  private static final String TEXT =
      "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"text\":\"tok\"}],\"usage\":null}\n\n";
  private static final String USAGE =
      "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":953,\"total_tokens\":969,"
          + "\"completion_tokens\":16,\"prompt_tokens_details\":{\"cached_tokens\":512}}}\n\n"
          + "data: [DONE]\n\n";

  @Test
  void theUsageChunk_givesPromptAndCachedTokens_afterChunksWithoutUsage() {
    UsageSniffer sniffer = new UsageSniffer();
    for (int i = 0; i < 20; i++) {
      sniffer.feed(ByteString.fromString(TEXT));
    }
    assertThat(sniffer.cachedTokens()).isEqualTo(-1);
    sniffer.feed(ByteString.fromString(USAGE));
    assertThat(sniffer.promptTokens()).isEqualTo(953);
    assertThat(sniffer.cachedTokens()).isEqualTo(512);
  }

  @Test
  void aUsageChunkSplitAtAnyByte_isFoundAcrossTheTwoChunks() {
    String stream = TEXT + USAGE;
    int usageAt = stream.indexOf("\"usage\":{");
    for (int cut = usageAt; cut < stream.length(); cut++) {
      UsageSniffer sniffer = new UsageSniffer();
      sniffer.feed(ByteString.fromString(stream.substring(0, cut)));
      // The second half arrives as a slice of a larger buffer, as the HTTP client hands it on.
      sniffer.feed(ByteString.fromString("xx" + stream.substring(cut)).drop(2));
      assertThat(sniffer.cachedTokens()).as("cut at %d", cut).isEqualTo(512);
      assertThat(sniffer.promptTokens()).as("cut at %d", cut).isEqualTo(953);
    }
  }

  @Test
  void anthropicsCacheReadTokens_countAsCached() {
    UsageSniffer sniffer = new UsageSniffer();
    sniffer.feed(
        ByteString.fromString(
            "event: message_start\ndata: {\"message\":{\"usage\":{\"input_tokens\":10,"
                + "\"cache_read_input_tokens\":7}}}\n\n"));
    assertThat(sniffer.cachedTokens()).isEqualTo(7);
  }

  @Test
  void aStreamWithoutUsage_reportsNone() {
    UsageSniffer sniffer = new UsageSniffer();
    for (int i = 0; i < 5; i++) {
      sniffer.feed(ByteString.fromString(TEXT));
    }
    assertThat(sniffer.cachedTokens()).isEqualTo(-1);
    assertThat(sniffer.promptTokens()).isEqualTo(-1);
  }
}
