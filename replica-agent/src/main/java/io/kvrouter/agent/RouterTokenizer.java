package io.kvrouter.agent;

/**
 * The router's tokenization of a completion prompt for one model (what the ingress computes block
 * keys from), handed to the agent by whoever builds it (the {@code kvrouter} command passes the
 * model's tokenizer from {@code kvrouter.models}). The agent only uses it for the alignment probe.
 * Must be thread-safe.
 */
@FunctionalInterface
public interface RouterTokenizer {
  int[] encodePrompt(String text);
}
