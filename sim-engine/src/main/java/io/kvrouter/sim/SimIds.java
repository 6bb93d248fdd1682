package io.kvrouter.sim;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The ids the simulated engine's answers carry, shaped as the APIs it speaks make them and random,
 * so that no two replicas, restarts or requests share one: OpenAI's {@code chatcmpl-}, {@code
 * cmpl-}, {@code resp_} and {@code chatcmpl-tool-} followed by a random UUID's 32 hex digits
 * (vLLM's {@code random_uuid()}), Anthropic's {@code msg_} and {@code toolu_} followed by 24 random
 * base-62 characters (about 143 bits).
 */
final class SimIds {

  private static final String BASE62 =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  private static final int ANTHROPIC_LENGTH = 24;

  private SimIds() {}

  /** {@code prefix} and a random UUID in hex, as vLLM names completions, chats and responses. */
  static String openAi(String prefix) {
    UUID u = UUID.randomUUID();
    return prefix + hex(u.getMostSignificantBits()) + hex(u.getLeastSignificantBits());
  }

  /** A tool call's id in OpenAI's chat and Responses answers. */
  static String openAiToolCall() {
    return openAi("chatcmpl-tool-");
  }

  /** An Anthropic message's id. */
  static String anthropicMessage() {
    return anthropic("msg_");
  }

  /** An Anthropic tool_use block's id. */
  static String anthropicToolUse() {
    return anthropic("toolu_");
  }

  private static String anthropic(String prefix) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    StringBuilder id = new StringBuilder(prefix.length() + ANTHROPIC_LENGTH).append(prefix);
    for (int i = 0; i < ANTHROPIC_LENGTH; i++) {
      id.append(BASE62.charAt(random.nextInt(BASE62.length())));
    }
    return id.toString();
  }

  private static String hex(long bits) {
    String h = Long.toHexString(bits);
    return "0".repeat(16 - h.length()) + h;
  }
}
