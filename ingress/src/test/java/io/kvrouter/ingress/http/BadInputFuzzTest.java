package io.kvrouter.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ContainerNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.ReplicaInfo;
import java.math.BigInteger;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Random JSON thrown at every inference endpoint (completions, chat, Anthropic messages and
 * count_tokens, Responses), through the real HTTP front, never gets a 5xx: whatever the shape, the
 * answer is either the engine's (a well-formed request) or a 4xx error object in the endpoint's own
 * protocol (Anthropic's on {@code /v1/messages}, OpenAI's elsewhere), and no reservation is left
 * open. Two generators: arbitrary JSON documents (mostly objects with the fields these APIs know),
 * and a well-formed request of each endpoint with one node anywhere in it replaced, removed or
 * joined by a random one.
 */
class BadInputFuzzTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private static final List<String> PATHS =
      List.of(
          "/v1/completions",
          "/v1/chat/completions",
          "/v1/messages",
          "/v1/messages/count_tokens",
          "/v1/responses");

  /** Field names the endpoints know, so random objects hit the validators' branches. */
  private static final List<String> KEYS =
      List.of(
          "model",
          "prompt",
          "messages",
          "role",
          "content",
          "type",
          "text",
          "max_tokens",
          "max_completion_tokens",
          "max_output_tokens",
          "stream",
          "temperature",
          "top_p",
          "top_k",
          "n",
          "stop",
          "stop_sequences",
          "seed",
          "logprobs",
          "logit_bias",
          "tools",
          "tool_choice",
          "function",
          "name",
          "parameters",
          "input_schema",
          "input",
          "instructions",
          "system",
          "tool_calls",
          "tool_use_id",
          "id",
          "arguments",
          "image_url",
          "url",
          "source",
          "data",
          "media_type",
          "thinking",
          "metadata",
          "user_id",
          "previous_response_id",
          "chat_template_kwargs",
          "stream_options",
          "response_format",
          "output_config");

  private static final Map<String, String> VALID =
      Map.of(
          "/v1/completions",
          "{\"model\":\"tiny\",\"prompt\":\"hello there\",\"max_tokens\":4,\"temperature\":0.5,"
              + "\"stop\":[\"x\"],\"logprobs\":1,\"stream\":false}",
          "/v1/chat/completions",
          "{\"model\":\"tiny\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
              + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}],"
              + "\"max_tokens\":4,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\","
              + "\"parameters\":{\"type\":\"object\"}}}],\"tool_choice\":\"auto\","
              + "\"logit_bias\":{\"1\":0.5},\"stream\":true}",
          "/v1/messages",
          "{\"model\":\"tiny\",\"max_tokens\":4,\"system\":\"be brief\",\"messages\":["
              + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},"
              + "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\","
              + "\"name\":\"f\",\"input\":{\"a\":1}}]},{\"role\":\"user\",\"content\":["
              + "{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"ok\"}]}],"
              + "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}],"
              + "\"temperature\":0.2,\"stop_sequences\":[\"x\"]}",
          "/v1/messages/count_tokens",
          "{\"model\":\"tiny\",\"system\":[{\"type\":\"text\",\"text\":\"be brief\"}],"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
              + "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}]}",
          "/v1/responses",
          "{\"model\":\"tiny\",\"input\":[{\"role\":\"user\",\"content\":\"hi\"}],"
              + "\"instructions\":\"be brief\",\"max_output_tokens\":4,\"temperature\":0.3}");

  private static ValidatingIngress ingress;

  @BeforeContainer
  static void start() throws Exception {
    ingress = new ValidatingIngress(4096, "64k", List.of(ReplicaInfo.RESPONSES_API));
  }

  @AfterContainer
  static void stop() throws Exception {
    ingress.close();
  }

  @Property(tries = 400)
  void randomJsonDocuments_neverGetA5xx(
      @ForAll long seed, @ForAll @IntRange(min = 0, max = 4) int endpoint) throws Exception {
    Random rnd = new Random(seed);
    JsonNode body = rnd.nextInt(5) == 0 ? value(rnd, 3) : object(rnd, 3);
    if (body.isObject() && rnd.nextInt(3) > 0) {
      ((ObjectNode) body).put("model", "tiny");
    }
    post(PATHS.get(endpoint), body.toString());
  }

  @Property(tries = 600)
  void wellFormedRequestsWithOneNodeBroken_neverGetA5xx(
      @ForAll long seed, @ForAll @IntRange(min = 0, max = 4) int endpoint) throws Exception {
    Random rnd = new Random(seed);
    String path = PATHS.get(endpoint);
    JsonNode body = JSON.readTree(VALID.get(path));
    int breaks = 1 + rnd.nextInt(2);
    for (int i = 0; i < breaks; i++) {
      breakOneNode(rnd, body);
    }
    post(path, body.toString());
  }

  /** Posts, and checks the answer: no 5xx, the protocol's error shape, nothing left reserved. */
  private static void post(String path, String body) throws Exception {
    HttpResponse<String> r = ingress.post(path, body);
    Statistics.label("status").collect(r.statusCode());
    assertThat(r.statusCode()).as("%s %s -> %s", path, body, r.body()).isLessThan(500);
    if (r.statusCode() >= 400) {
      JsonNode error = JSON.readTree(r.body());
      if (path.startsWith("/v1/messages")) {
        assertThat(error.path("type").asText()).as(r.body()).isEqualTo("error");
        assertThat(error.path("error").path("type").isTextual()).as(r.body()).isTrue();
      } else {
        assertThat(error.path("error").path("type").isTextual()).as(r.body()).isTrue();
        assertThat(error.path("error").has("code")).as(r.body()).isTrue();
      }
      assertThat(error.path("error").path("message").asText()).as(r.body()).isNotBlank();
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!ingress.router.open.isEmpty() && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(ingress.router.open).as("no reservation left open by %s %s", path, body).isEmpty();
  }

  // ------------------------------------------------------------------ generators

  private static JsonNode value(Random rnd, int depth) {
    int kind = rnd.nextInt(depth > 0 ? 12 : 9);
    return switch (kind) {
      case 0 -> F.nullNode();
      case 1 -> F.booleanNode(rnd.nextBoolean());
      case 2 -> F.numberNode(rnd.nextInt(5) - 1);
      case 3 ->
          F.numberNode(
              List.of(Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40, 2_000_000_000L)
                  .get(rnd.nextInt(4)));
      case 4 -> F.numberNode(new BigInteger("123456789012345678901234567890"));
      case 5 -> F.numberNode(List.of(0.5, -1.5, 1e308, -0.0, 3.0).get(rnd.nextInt(5)));
      case 6, 7 -> F.textNode(text(rnd));
      case 8 -> F.textNode(KEYS.get(rnd.nextInt(KEYS.size())));
      case 9, 10 -> object(rnd, depth - 1);
      default -> array(rnd, depth - 1);
    };
  }

  private static String text(Random rnd) {
    return List.of(
            "",
            " ",
            "hi",
            "user",
            "assistant",
            "system",
            "tool",
            "text",
            "image",
            "function",
            "tool_use",
            "tool_result",
            "auto",
            "any",
            "none",
            "data:image/png;base64,AAAA",
            "\u0000\uffff",
            "\uD83D\uDE00 emoji",
            "{{ raise_exception('x') }}",
            "<|im_start|>",
            "x".repeat(300))
        .get(rnd.nextInt(21));
  }

  private static ObjectNode object(Random rnd, int depth) {
    ObjectNode o = F.objectNode();
    int n = rnd.nextInt(6);
    for (int i = 0; i < n; i++) {
      String key = rnd.nextInt(6) == 0 ? text(rnd) : KEYS.get(rnd.nextInt(KEYS.size()));
      o.set(key, value(rnd, Math.max(0, depth)));
    }
    return o;
  }

  private static ArrayNode array(Random rnd, int depth) {
    ArrayNode a = F.arrayNode();
    int n = rnd.nextInt(4);
    for (int i = 0; i < n; i++) {
      a.add(value(rnd, Math.max(0, depth)));
    }
    return a;
  }

  /** Replaces, removes or adds one node anywhere under {@code root}. */
  private static void breakOneNode(Random rnd, JsonNode root) {
    List<ContainerNode<?>> containers = new ArrayList<>();
    collect(root, containers);
    ContainerNode<?> c = containers.get(rnd.nextInt(containers.size()));
    if (c instanceof ObjectNode o) {
      List<String> names = new ArrayList<>();
      o.fieldNames().forEachRemaining(names::add);
      int op = rnd.nextInt(3);
      if (names.isEmpty() || op == 2) {
        o.set(KEYS.get(rnd.nextInt(KEYS.size())), value(rnd, 2));
      } else if (op == 1 && !names.get(0).equals("model")) {
        o.remove(names.get(rnd.nextInt(names.size())));
      } else {
        o.set(names.get(rnd.nextInt(names.size())), value(rnd, 2));
      }
    } else {
      ArrayNode a = (ArrayNode) c;
      int op = rnd.nextInt(3);
      if (a.isEmpty() || op == 2) {
        a.add(value(rnd, 2));
      } else if (op == 1) {
        a.remove(rnd.nextInt(a.size()));
      } else {
        a.set(rnd.nextInt(a.size()), value(rnd, 2));
      }
    }
  }

  private static void collect(JsonNode node, List<ContainerNode<?>> out) {
    if (node instanceof ContainerNode<?> c) {
      out.add(c);
      for (Iterator<JsonNode> it = node.elements(); it.hasNext(); ) {
        collect(it.next(), out);
      }
    }
  }
}
