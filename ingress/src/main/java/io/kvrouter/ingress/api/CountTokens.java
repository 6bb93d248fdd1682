package io.kvrouter.ingress.api;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The answer to Anthropic's {@code POST /v1/messages/count_tokens}: {@code {"input_tokens": N}},
 * with N the prompt tokens of the conversation rendered by the model's own chat template and
 * tokenizer, exactly as for {@code /v1/messages} (so it equals the prompt the engine then runs:
 * {@code input_tokens + cache_read_input_tokens} of the message). vLLM's own endpoint answers the
 * same shape with {@code context_management.original_input_tokens} (vllm-project/vllm {@code
 * vllm/entrypoints/anthropic/serving.py} {@code count_tokens}).
 */
public final class CountTokens {

  private CountTokens() {}

  public static ObjectNode body(int inputTokens) {
    ObjectNode out = JsonNodeFactory.instance.objectNode();
    out.put("input_tokens", inputTokens);
    out.putObject("context_management").put("original_input_tokens", inputTokens);
    return out;
  }
}
