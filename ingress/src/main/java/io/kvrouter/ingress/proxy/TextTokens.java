package io.kvrouter.ingress.proxy;

/** The token ids a model's tokenizer makes of generated text (no special tokens added). */
@FunctionalInterface
public interface TextTokens {
  int[] encode(String model, String text);
}
