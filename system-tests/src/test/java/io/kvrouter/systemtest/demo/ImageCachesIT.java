package io.kvrouter.systemtest.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.cli.dev.DemoCluster;
import io.kvrouter.cli.dev.DemoOptions;
import io.kvrouter.protocol.keys.MediaPrompt;
import io.kvrouter.testing.LoopbackHttp;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Images in chats through the whole path, over real HTTP (one ingress, two simulated vLLM engines,
 * the kvrouter policy): the engine expands an image into placeholder tokens and hashes its
 * identifier into the blocks they overlap, publishing it in its events' {@code extra_keys}; the
 * agent keys the blocks with it and the ingress keys the request with it. A second chat with the
 * same image and another question goes to the engine that holds the image's blocks and hits them
 * there; a chat with another image is predicted uncached and computes afresh.
 */
class ImageCachesIT {

  private static final int IMAGE_TOKENS = MediaPrompt.Settings.DEFAULTS.imageTokens();

  private static String dataUrl(String payload) {
    return "data:image/png;base64,"
        + Base64.getEncoder().encodeToString(payload.getBytes(StandardCharsets.UTF_8));
  }

  private static ArrayNode chat(String image, String question) {
    return chat(image, null, question);
  }

  /** A chat with one image part (its client {@code uuid} when not null), then a question. */
  private static ArrayNode chat(String image, String uuid, String question) {
    ArrayNode messages = LoopbackHttp.JSON.createArrayNode();
    ObjectNode user = messages.addObject().put("role", "user");
    ArrayNode parts = user.putArray("content");
    ObjectNode part = parts.addObject().put("type", "image_url");
    part.putObject("image_url").put("url", dataUrl(image));
    if (uuid != null) {
      part.put("uuid", uuid);
    }
    parts.addObject().put("type", "text").put("text", question);
    return messages;
  }

  /** What one chat did: the engine that served it, its cached tokens, the predicted ones. */
  private record Sent(int engine, int cached, double predicted) {}

  private static Sent send(DemoCluster cluster, String model, ArrayNode messages) throws Exception {
    String ingress = cluster.ingressUrls().get(0);
    DemoClient.awaitConverged(ingress);
    List<io.kvrouter.loadtest.bench.EngineSnapshot> before = DemoClient.engineCounters(cluster);
    double predictedBefore = DemoClient.predictedCachedTokens(ingress);
    HttpResponse<String> r =
        LoopbackHttp.post(ingress + "/v1/chat/completions", DemoClient.chat(model, messages, 2));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode usage = LoopbackHttp.JSON.readTree(r.body()).path("usage");
    return new Sent(
        DemoClient.servedBy(before, DemoClient.engineCounters(cluster)),
        usage.path("prompt_tokens_details").path("cached_tokens").asInt(),
        DemoClient.predictedCachedTokens(ingress) - predictedBefore);
  }

  @Test
  void sameImageHitsItsEnginesBlocks_anotherImageDoesNot() throws Exception {
    DemoOptions options = DemoClient.kvrouterCluster(2);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String cat = "a cat photo " + DemoClient.words(3, 40);
      String dog = "a dog photo " + DemoClient.words(4, 40);

      Sent first = send(cluster, options.model(), chat(cat, "What animal is this?"));
      Sent same = send(cluster, options.model(), chat(cat, "How old does it look to you?"));
      Sent other = send(cluster, options.model(), chat(dog, "What animal is this?"));

      System.out.printf(
          "image caches: first on engine %d; same image on %d (predicted %.0f, engine %d cached);"
              + " another image on %d (predicted %.0f, engine %d cached)%n",
          first.engine(),
          same.engine(),
          same.predicted(),
          same.cached(),
          other.engine(),
          other.predicted(),
          other.cached());
      assertThat(first.cached()).isZero();
      assertThat(same.engine())
          .as("routed to the engine holding the image")
          .isEqualTo(first.engine());
      // the image's placeholders start 3 tokens in ("<|im_start|>user\n"), so every block up to
      // the one the question starts in holds only the image and the head: 16 blocks of 16
      assertThat(same.cached())
          .as("the engine's hit covers the image's blocks")
          .isGreaterThanOrEqualTo(IMAGE_TOKENS);
      assertThat(same.predicted()).as("predicted for the same image").isEqualTo(same.cached());
      assertThat(other.cached()).as("the engine's hit for another image").isZero();
      assertThat(other.predicted()).as("predicted for another image").isZero();
    }
  }

  @Test
  void aClientUuidNamesTheImage_whateverItsBytes() throws Exception {
    DemoOptions options = DemoClient.kvrouterCluster(2);
    try (DemoCluster cluster = DemoCluster.start(options)) {
      cluster.awaitReady(Duration.ofSeconds(60));
      String model = options.model();
      Sent first = send(cluster, model, chat("scan at 300 dpi", "scan-7", "Summarise it."));
      // the same uuid with other bytes (a re-encoded copy): the engine takes the uuid as the
      // image's identifier, as vLLM does, and so does the router
      Sent copy = send(cluster, model, chat("scan at 150 dpi", "scan-7", "Any dates in it?"));
      Sent other = send(cluster, model, chat("scan at 300 dpi", "scan-8", "Summarise it."));
      System.out.printf(
          "image uuids: same uuid on %d after %d (predicted %.0f, engine %d cached); other uuid"
              + " predicted %.0f, engine %d%n",
          copy.engine(),
          first.engine(),
          copy.predicted(),
          copy.cached(),
          other.predicted(),
          other.cached());
      assertThat(copy.engine()).isEqualTo(first.engine());
      assertThat(copy.cached()).isGreaterThanOrEqualTo(IMAGE_TOKENS);
      assertThat(copy.predicted()).isEqualTo(copy.cached());
      assertThat(other.cached()).isZero();
      assertThat(other.predicted()).isZero();
    }
  }
}
