package io.kvrouter.ingress.tokenize;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import com.knuddels.jtokkit.api.IntArrayList;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * An OpenAI tiktoken encoding ({@code o200k_base}, {@code cl100k_base}, ...) through jtokkit, whose
 * vocabularies ship inside its jar: needs no files and no network, which makes it the tokenizer of
 * the default demo model.
 *
 * <p>All text is encoded as ordinary text: special-token markup in a prompt (such as {@code
 * <|endoftext|>}) is split into ordinary tokens instead of being rejected or turned into a control
 * token, and there are no BOS/EOS tokens to add, so {@code addSpecialTokens} has no effect.
 * (tiktoken's {@code encode_ordinary}.)
 *
 * <p>o200k text that is all ASCII (most prompts) goes through {@link O200kAsciiEncoder}, which
 * gives the same ids about ten times faster than jtokkit's regex pre-tokenizer; other text and
 * other encodings go through jtokkit.
 *
 * <p>Thread-safe: jtokkit encodings and the ASCII encoder are immutable. Cost: jtokkit encodes a
 * few million tokens per second per thread on English text (far fewer for o200k on text of
 * pseudo-words); loading an encoding takes a few hundred milliseconds the first time per JVM.
 */
public final class TiktokenPromptTokenizer implements PromptTokenizer {

  private static final EncodingRegistry REGISTRY = Encodings.newLazyEncodingRegistry();

  private final Encoding encoding;
  private final O200kAsciiEncoder ascii;

  private TiktokenPromptTokenizer(Encoding encoding, O200kAsciiEncoder ascii) {
    this.encoding = encoding;
    this.ascii = ascii;
  }

  /**
   * Returns the tokenizer for an encoding.
   *
   * @param name the tiktoken name, e.g. {@code o200k_base} (case-insensitive)
   * @throws TokenizerConfigException if jtokkit has no such encoding
   */
  public static TiktokenPromptTokenizer forEncoding(String name) {
    for (EncodingType type : EncodingType.values()) {
      if (type.getName().equalsIgnoreCase(name.trim())) {
        return new TiktokenPromptTokenizer(
            REGISTRY.getEncoding(type),
            type == EncodingType.O200K_BASE ? O200kAsciiEncoder.load() : null);
      }
    }
    throw new TokenizerConfigException(
        "unknown tiktoken encoding '"
            + name
            + "'; known: "
            + Arrays.stream(EncodingType.values())
                .map(EncodingType::getName)
                .collect(Collectors.joining(", ")));
  }

  @Override
  public int[] encode(String text, boolean addSpecialTokens) {
    if (ascii != null) {
      int[] ids = ascii.encode(text);
      if (ids != null) {
        return ids;
      }
    }
    return encoding.encodeOrdinary(text).toArray();
  }

  @Override
  public String decode(int[] ids) {
    IntArrayList list = new IntArrayList(ids.length);
    for (int id : ids) {
      list.add(id);
    }
    try {
      return encoding.decode(list);
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "token id outside the " + encoding.getName() + " vocabulary", e);
    }
  }

  @Override
  public String description() {
    return "tiktoken:" + encoding.getName().toLowerCase(Locale.ROOT);
  }
}
