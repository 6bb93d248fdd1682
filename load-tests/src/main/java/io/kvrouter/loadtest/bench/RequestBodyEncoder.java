package io.kvrouter.loadtest.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The JSON body of one streaming request, OpenAI style: {@code model}, {@code prompt} (text or
 * token ids) or {@code messages}, {@code max_tokens}, {@code stream: true} and
 * {@code stream_options.include_usage: true} so the server ends with a usage chunk (vLLM then
 * reports {@code usage.prompt_tokens_details.cached_tokens} when prefix caching stats are on).
 *
 * <p>Thread-safe (the shared mapper is). Cost: O(prompt size) time and bytes.
 */
final class RequestBodyEncoder {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private RequestBodyEncoder() {
    }

    /**
     * Encodes {@code request} for {@code endpoint}.
     *
     * @throws IllegalArgumentException if the prompt form does not fit the endpoint (token ids
     *                                  to chat, messages to completions)
     */
    static byte[] encode(BenchRequest request, String model, Endpoint endpoint, boolean ignoreEos) {
        ObjectNode body = MAPPER.createObjectNode();
        body.put("model", model);
        BenchPrompt prompt = request.prompt();
        if (endpoint == Endpoint.COMPLETIONS) {
            if (prompt instanceof BenchPrompt.Text t) {
                body.put("prompt", t.text());
            } else if (prompt instanceof BenchPrompt.TokenIds ids) {
                ArrayNode arr = body.putArray("prompt");
                for (int id : ids.ids()) {
                    arr.add(id);
                }
            } else {
                throw new IllegalArgumentException("chat messages cannot be sent to /v1/completions; use --endpoint chat");
            }
        } else {
            ArrayNode messages = body.putArray("messages");
            if (prompt instanceof BenchPrompt.Text t) {
                messages.addObject().put("role", "user").put("content", t.text());
            } else if (prompt instanceof BenchPrompt.Chat chat) {
                for (BenchPrompt.ChatMessage m : chat.messages()) {
                    messages.addObject().put("role", m.role()).put("content", m.content());
                }
            } else {
                throw new IllegalArgumentException("token-id prompts cannot be sent to /v1/chat/completions; "
                        + "use --endpoint completions");
            }
        }
        body.put("max_tokens", request.maxTokens());
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        if (ignoreEos) {
            body.put("ignore_eos", true);
        }
        try {
            return MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode a request body", e);
        }
    }
}
