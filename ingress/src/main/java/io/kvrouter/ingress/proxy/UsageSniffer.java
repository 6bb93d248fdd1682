package io.kvrouter.ingress.proxy;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the engine's usage numbers in a streamed OpenAI response without parsing every chunk: it
 * scans a sliding window of the bytes for {@code "cached_tokens":N} (OpenAI chat and completions,
 * Responses) or {@code "cache_read_input_tokens":N} (Anthropic) and {@code "prompt_tokens":N} (the
 * usage chunk that {@code stream_options.include_usage} adds). Cost: a substring search over each
 * chunk, two regex scans over the chunks that mention {@code _tokens}, plus a window of 64
 * characters carried across chunks. Not thread-safe; a stream's elements arrive in order.
 */
final class UsageSniffer {

  private static final Pattern CACHED =
      Pattern.compile("\"(?:cached_tokens|cache_read_input_tokens)\"\\s*:\\s*(\\d+)");
  private static final Pattern PROMPT = Pattern.compile("\"prompt_tokens\"\\s*:\\s*(\\d+)");
  private static final int CARRY = 64;

  private String carry = "";
  private int cachedTokens = -1;
  private int promptTokens = -1;

  void feed(byte[] chunk) {
    String text = carry + new String(chunk, StandardCharsets.UTF_8);
    if (text.indexOf("_tokens") < 0) {
      // Most chunks carry one token of text and no usage: skip both scans.
      carry = text.length() > CARRY ? text.substring(text.length() - CARRY) : text;
      return;
    }
    Matcher c = CACHED.matcher(text);
    while (c.find()) {
      cachedTokens = Integer.parseInt(c.group(1));
    }
    Matcher p = PROMPT.matcher(text);
    while (p.find()) {
      promptTokens = Integer.parseInt(p.group(1));
    }
    carry = text.length() > CARRY ? text.substring(text.length() - CARRY) : text;
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
