package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link O200kRanks} against the vocabulary file it is read from ({@code o200k_base.tiktoken} as
 * jtokkit 1.1.0 ships it): every all-ASCII token, of every length and so in every table, looks up
 * to its own rank, and byte strings one byte longer or shorter than a token, which are not tokens
 * themselves, look up to no rank.
 */
class O200kRanksTest {

  private static final O200kRanks RANKS = O200kRanks.load();

  @Test
  void everyAsciiTokenOfTheVocabulary_hasItsOwnRank_andNeighboursThatAreNoTokensHaveNone()
      throws IOException {
    Map<String, Integer> vocabulary = asciiVocabulary();
    assertThat(vocabulary).hasSizeGreaterThan(120_000);
    int checked = 0;
    int absent = 0;
    for (Map.Entry<String, Integer> e : vocabulary.entrySet()) {
      byte[] token = e.getKey().getBytes(StandardCharsets.ISO_8859_1);
      assertThat(rank(token)).as("rank of %s", e.getKey()).isEqualTo(e.getValue());
      checked++;
      for (String other :
          new String[] {e.getKey() + "\0", e.getKey() + "q", e.getKey().substring(1) + "\0"}) {
        if (!vocabulary.containsKey(other)) {
          assertThat(rank(other.getBytes(StandardCharsets.ISO_8859_1)))
              .as("rank of %s, no token", other.replace("\0", "\\0"))
              .isEqualTo(O200kRanks.NO_RANK);
          absent++;
        }
      }
    }
    assertThat(checked).isEqualTo(vocabulary.size());
    assertThat(absent).isGreaterThan(200_000);
  }

  /** The rank of {@code token} looked up inside a larger array, as the encoder looks pieces up. */
  private static int rank(byte[] token) {
    byte[] text = new byte[token.length + 4];
    text[0] = 'x';
    text[1] = 'y';
    System.arraycopy(token, 0, text, 2, token.length);
    text[text.length - 2] = 'z';
    text[text.length - 1] = 'w';
    return RANKS.rank(text, 2, 2 + token.length);
  }

  private static Map<String, Integer> asciiVocabulary() throws IOException {
    Map<String, Integer> ascii = new HashMap<>();
    try (InputStream in =
        O200kRanks.class.getResourceAsStream("/com/knuddels/jtokkit/o200k_base.tiktoken")) {
      BufferedReader reader =
          new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
      for (String line; (line = reader.readLine()) != null; ) {
        int space = line.indexOf(' ');
        byte[] token = Base64.getDecoder().decode(line.substring(0, space));
        boolean isAscii = token.length > 0;
        for (byte b : token) {
          isAscii &= b >= 0;
        }
        if (isAscii) {
          ascii.put(
              new String(token, StandardCharsets.ISO_8859_1),
              Integer.parseInt(line.substring(space + 1).trim()));
        }
      }
    }
    return ascii;
  }
}
