package io.kvrouter.ingress.proxy;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.util.ByteString;

/**
 * Finds the engine's usage numbers in a streamed OpenAI response without parsing every chunk: it
 * scans a sliding window of the bytes for {@code "cached_tokens":N} (OpenAI chat and completions,
 * Responses) or {@code "cache_read_input_tokens":N} (Anthropic) and {@code "prompt_tokens":N} (the
 * usage chunk that {@code stream_options.include_usage} adds). Cost: a byte search for {@code
 * _tokens} over each chunk as it came (no copy, no string), two regex scans over the window of the
 * chunks that mention it, plus a window of 64 bytes carried across chunks (a slice, not a copy).
 * Not thread-safe; a stream's elements arrive in order.
 */
final class UsageSniffer {

  private static final Pattern CACHED =
      Pattern.compile("\"(?:cached_tokens|cache_read_input_tokens)\"\\s*:\\s*(\\d+)");
  private static final Pattern PROMPT = Pattern.compile("\"prompt_tokens\"\\s*:\\s*(\\d+)");
  private static final byte[] MARK = {'_', 't', 'o', 'k', 'e', 'n', 's'};
  private static final int CARRY = 64;

  private ByteString carry = ByteString.emptyByteString();
  private int cachedTokens = -1;
  private int promptTokens = -1;

  void feed(ByteString chunk) {
    ByteString window = carry.isEmpty() ? chunk : carry.concat(chunk);
    if (mentionsTokens(window)) {
      String text = window.utf8String();
      Matcher c = CACHED.matcher(text);
      while (c.find()) {
        cachedTokens = Integer.parseInt(c.group(1));
      }
      Matcher p = PROMPT.matcher(text);
      while (p.find()) {
        promptTokens = Integer.parseInt(p.group(1));
      }
    }
    // Most chunks carry one token of text and no usage: only the window moves on.
    carry = window.size() > CARRY ? window.takeRight(CARRY) : window;
  }

  /** Whether {@code bytes} hold {@code _tokens}. */
  private static boolean mentionsTokens(ByteString bytes) {
    int last = bytes.size() - MARK.length;
    for (int i = bytes.indexOf(MARK[0], 0);
        i >= 0 && i <= last;
        i = bytes.indexOf(MARK[0], i + 1)) {
      int k = 1;
      while (k < MARK.length && bytes.apply(i + k) == MARK[k]) {
        k++;
      }
      if (k == MARK.length) {
        return true;
      }
    }
    return false;
  }

  /** Engine-reported cached prompt tokens, or -1 when the stream did not carry usage. */
  int cachedTokens() {
    return cachedTokens;
  }

  /** Engine-reported prompt tokens, or -1. */
  int promptTokens() {
    return promptTokens;
  }
}
