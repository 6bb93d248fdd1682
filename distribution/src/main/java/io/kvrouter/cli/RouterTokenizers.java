package io.kvrouter.cli;

import io.kvrouter.agent.RouterTokenizer;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import java.util.function.Function;

/**
 * The router's prompt tokenizers, as the replica agent's alignment probe needs them: each model's
 * tokenizer from {@code kvrouter.models} (the ingress's own), or null for a model the registry does
 * not list (the probe then sends token ids).
 */
public final class RouterTokenizers {

  private RouterTokenizers() {}

  public static Function<String, RouterTokenizer> of(TokenizerRegistry registry) {
    return model -> registry.find(model).map(RouterTokenizers::of).orElse(null);
  }

  private static RouterTokenizer of(ModelTokenizer t) {
    return t::encodePrompt;
  }
}
