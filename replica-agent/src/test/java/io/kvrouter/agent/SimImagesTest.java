package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.agent.kvevents.VllmEventDecoder;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import io.kvrouter.protocol.engine.EventEncoding;
import io.kvrouter.protocol.keys.BlockKeys;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.protocol.keys.MediaPrompt;
import io.kvrouter.sim.ByteTokenizer;
import io.kvrouter.sim.Emission;
import io.kvrouter.sim.GenerationRequest;
import io.kvrouter.sim.MockerTimingModel;
import io.kvrouter.sim.SimApiError;
import io.kvrouter.sim.SimEngineConfig;
import io.kvrouter.sim.SimEngineCore;
import io.kvrouter.sim.SimRequest;
import io.kvrouter.sim.SimTokenizer;
import io.kvrouter.sim.StepResult;
import io.kvrouter.sim.VllmEventEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The simulated engine treats images as vLLM does: placeholder tokens where the image sits, the
 * image's identifier in the hash and the {@code extra_keys} of every block the placeholders
 * overlap, so the same image shares cached blocks and another image does not; and the router key
 * the agent derives from the engine's event equals the one the ingress computes for the request.
 */
class SimImagesTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int BS = 4;
  private static final MediaPrompt.Settings IMAGES = new MediaPrompt.Settings(12, 300, null);
  private static final GenerationRequest.Media MEDIA = new GenerationRequest.Media(IMAGES, "m");

  private static String dataUrl(String payload) {
    return "data:image/png;base64,"
        + Base64.getEncoder().encodeToString(payload.getBytes(StandardCharsets.UTF_8));
  }

  private static JsonNode chat(String imageUrl, String uuid, String question) throws Exception {
    var body = JSON.createObjectNode();
    var parts = body.putArray("messages").addObject().put("role", "user").putArray("content");
    var image = parts.addObject().put("type", "image_url");
    image.putObject("image_url").put("url", imageUrl);
    if (uuid != null) {
      image.put("uuid", uuid);
    }
    parts.addObject().put("type", "text").put("text", question);
    body.put("max_tokens", 1);
    return body;
  }

  private static GenerationRequest parse(JsonNode body) {
    return GenerationRequest.chat(body, SimTokenizer.BYTES, "id", MEDIA);
  }

  /** Runs one request to its end; returns its cached prompt tokens and collects its events. */
  private static int run(SimEngineCore core, GenerationRequest g, String id, List<EngineEvent> ev) {
    core.setKvEventListener((events, at) -> ev.addAll(events));
    core.submit(
        new SimRequest(id, g.prompt(), 1, null, g.cacheSalt(), g.media()), ev.size() * 1000L);
    int cached = -1;
    long now = 0;
    while (core.hasWork()) {
      StepResult r = core.step(now);
      for (Emission e : r.emissions()) {
        cached = e.cachedPromptTokens();
      }
      now = r.endMicros();
    }
    return cached;
  }

  private static SimEngineCore core() {
    return new SimEngineCore(
        SimEngineConfig.defaults()
            .withBlockSize(BS)
            .withNumBlocks(256)
            .withTiming(new MockerTimingModel(1000)));
  }

  @Test
  void imagePartBecomesPlaceholderTokensInFrontOfTheText() throws Exception {
    GenerationRequest g = parse(chat(dataUrl("cat"), null, "what?"));
    String head = "<|user|>\n";
    assertThat(g.media()).hasSize(1);
    MediaPrompt.Item item = g.media().get(0);
    assertThat(item.start()).isEqualTo(head.length());
    assertThat(item.length()).isEqualTo(12);
    for (int i = 0; i < 12; i++) {
      assertThat(g.prompt()[item.start() + i]).isEqualTo(300);
    }
    assertThat(ByteTokenizer.decode(g.prompt()))
        .isEqualTo(head + "<300>".repeat(12) + "\nwhat?\n<|assistant|>\n");
    assertThat(item.identifier())
        .isEqualTo(MediaPrompt.identifier(new MediaPrompt.Image(null, dataUrl("cat")), "m"))
        .hasSize(64);
  }

  @Test
  void uuidIsTheIdentifier() throws Exception {
    assertThat(parse(chat(dataUrl("cat"), "cat-1", "what?")).media().get(0).identifier())
        .isEqualTo("cat-1");
  }

  @Test
  void badImagePartsAre400s() {
    var body = JSON.createObjectNode();
    body.putArray("messages")
        .addObject()
        .put("role", "user")
        .putArray("content")
        .addObject()
        .put("type", "image_url")
        .putObject("image_url")
        .put("url", "data:image/png;base64,not base64!");
    assertThatThrownBy(() -> parse(body))
        .isInstanceOfSatisfying(SimApiError.class, e -> assertThat(e.status).isEqualTo(400))
        .hasMessageContaining("base64");
  }

  @Test
  void sameImageSharesItsBlocks_anotherImageDoesNot() throws Exception {
    SimEngineCore core = core();
    List<EngineEvent> events = new ArrayList<>();
    GenerationRequest first = parse(chat(dataUrl("cat"), null, "what colour is it?"));
    assertThat(run(core, first, "a", events)).isZero();
    // same image, another question: the blocks up to and including the image's are shared
    GenerationRequest same = parse(chat(dataUrl("cat"), null, "how old is it?"));
    MediaPrompt.Item image = same.media().get(0);
    int imageEnd = image.start() + image.length();
    assertThat(run(core, same, "b", events))
        .isGreaterThanOrEqualTo(imageEnd / BS * BS)
        .isGreaterThan(image.start());
    // another image of the same size, same question: only the blocks before the image are shared
    GenerationRequest other = parse(chat(dataUrl("dog"), null, "what colour is it?"));
    assertThat(other.prompt()).isEqualTo(first.prompt());
    assertThat(run(core, other, "c", events)).isEqualTo(image.start() / BS * BS);
  }

  @Test
  void theDisaggregationHandshakeCountsImageBlocksAsCached() throws Exception {
    SimEngineCore core = core();
    GenerationRequest g = parse(chat(dataUrl("cat"), null, "what colour is it?"));
    run(core, g, "a", new ArrayList<>());
    int full = g.prompt().length / BS;
    assertThat(core.cachedPrefixBlockIds(g.prompt(), null, g.media())).hasSize(full);
    assertThat(core.missingPrefillBlocks(g.prompt(), null, g.media())).isZero();
    // without the image in the hash only the blocks before it match
    int before = g.media().get(0).start() / BS;
    assertThat(core.cachedPrefixBlockIds(g.prompt(), null, List.of())).hasSize(before);
  }

  @ParameterizedTest
  @EnumSource(EventEncoding.class)
  void eventsCarryTheImageInExtraKeys_andTheAgentsKeysEqualTheIngresss(EventEncoding encoding)
      throws Exception {
    SimEngineCore core = core();
    List<EngineEvent> events = new ArrayList<>();
    GenerationRequest g = parse(chat(dataUrl("cat"), null, "what colour is it?"));
    run(core, g, "a", events);
    // through the wire and the agent's decoder, as the agent receives them
    byte[] wire = new VllmEventEncoder(encoding).encode(new EngineEventBatch(1.0, events, 0));
    List<EngineEvent> decoded = new VllmEventDecoder().decode(wire).events();
    EngineEvent.BlockStored stored = (EngineEvent.BlockStored) decoded.get(0);
    MediaPrompt.Item image = g.media().get(0);
    String id = image.identifier();
    for (int b = 0; b < stored.blockHashes().length; b++) {
      long start = (long) b * BS;
      boolean overlaps = image.start() < start + BS && image.start() + image.length() > start;
      assertThat(stored.extraKeys().get(b))
          .as("block %d", b)
          .isEqualTo(
              overlaps ? List.of(new EngineEvent.MediaKey(id, image.start() - start)) : List.of());
    }
    // the agent's key for each block equals the ingress's for the request
    EngineKeyBridge bridge = new EngineKeyBridge(new TrackerRouterKeys("m"), BS, 256);
    long[] agent = ((BlocksStored) bridge.translate(decoded).get(0)).blockKeys();
    long[] ingress =
        BlockKeys.of("m", BS).keys(g.prompt(), MediaPrompt.withItems(ExtraKeys.NONE, g.media()));
    assertThat(agent).containsExactly(java.util.Arrays.copyOf(ingress, agent.length));
    long[] noImage = BlockKeys.of("m", BS).keys(g.prompt(), ExtraKeys.NONE);
    assertThat(agent[image.start() / BS]).isNotEqualTo(noImage[image.start() / BS]);
  }
}
