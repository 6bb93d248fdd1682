package io.kvrouter.sim;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The simulated engine's tokenizer: one token per UTF-8 byte (ids 0–255), deterministic and
 * invertible, so text prompts get real token counts and a repeated prompt hits the prefix cache.
 * Token ids from 256 up (a router forwarding a real tokenizer's ids) render as {@code <id>}. The
 * chat template is {@code "<|role|>\n" + content + "\n"} per message, then {@code
 * "<|assistant|>\n"}. Stateless and thread-safe.
 */
public final class ByteTokenizer {

  private ByteTokenizer() {}

  public static int[] encode(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    int[] out = new int[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      out[i] = bytes[i] & 0xFF;
    }
    return out;
  }

  public static String decode(int[] tokens) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(tokens.length);
    StringBuilder sb = new StringBuilder();
    for (int t : tokens) {
      if (t >= 0 && t < 256) {
        bytes.write(t);
      } else {
        sb.append(bytes.toString(StandardCharsets.UTF_8));
        bytes.reset();
        sb.append('<').append(t).append('>');
      }
    }
    return sb.append(bytes.toString(StandardCharsets.UTF_8)).toString();
  }

  /** Renders a chat with the trivial template (see class comment). */
  public static String applyChatTemplate(
      java.util.List<String[]> roleAndContent, boolean addGenerationPrompt) {
    StringBuilder sb = new StringBuilder();
    for (String[] m : roleAndContent) {
      sb.append("<|").append(m[0]).append("|>\n").append(m[1]).append('\n');
    }
    if (addGenerationPrompt) {
      sb.append("<|assistant|>\n");
    }
    return sb.toString();
  }
}
