package io.kvrouter.protocol.keys;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.commons.codec.digest.Blake3;

/**
 * Images in chat prompts as vLLM handles them, shared by the simulated engine and the ingress so
 * that both put the same placeholder tokens at the same positions and name each image with the same
 * identifier; the blocks the placeholders overlap then carry {@code (identifier, offset)} in the
 * engine's {@code extra_keys} and in the router's keys alike ({@link ExtraKeys#withMedia}).
 *
 * <p>The pipeline, each step as vLLM does it (vllm-project/vllm, read at v0.21.0 and main of 2026;
 * cited by file and function):
 *
 * <ol>
 *   <li><b>Content parts.</b> An OpenAI {@code {"type":"image_url","image_url":{"url":...}}} part
 *       (or vLLM's simple form {@code "image_url":"..."}) is an image; its optional top-level
 *       {@code "uuid"} is the client's multimodal UUID ({@code vllm/entrypoints/chat_utils.py},
 *       {@code CustomChatCompletionContentSimpleImageParam.uuid}: "User must guarantee that it is
 *       properly generated and unique for different medias").
 *   <li><b>Text.</b> For a string-content chat template vLLM joins a message's text parts with
 *       {@code "\n"} and puts one model placeholder per image in front, joined with {@code "\n"}
 *       ({@code chat_utils.py} {@code _get_full_multimodal_text_prompt}: "we always add missing
 *       placeholders at the front of the prompt"). {@link #flatten} does that with {@link #MARKER}
 *       standing for the model's placeholder string.
 *   <li><b>Placeholder tokens.</b> The model's processor expands each placeholder into a
 *       model-specific number of image tokens ({@code vllm/multimodal/processing}, {@code
 *       PromptReplacement}); the marker, a single special token in the real template, splits
 *       tokenization there. {@link #expand} encodes the text between markers and inserts {@link
 *       Settings#imageTokens} copies of {@link Settings#imageTokenId} per marker; {@link #locate}
 *       finds the runs again in the token ids, as vLLM's {@code find_mm_placeholders} scans the
 *       prompt.
 *   <li><b>Identifier.</b> With a client {@code uuid} the engine uses it as it is, unhashed, unless
 *       processor kwargs are set ({@code vllm/multimodal/processing/inputs.py} {@code
 *       ProcessorInputs.get_mm_hashes}): exact. Without one, vLLM hashes {@code
 *       hash_kwargs(model_id=..., image=item)}: BLAKE3 over {@code "model_id"}, the model id,
 *       {@code "image"} and, for an image loaded from bytes ({@code vllm/multimodal/media/image.py}
 *       {@code ImageMediaIO.load_bytes} keeps them as {@code MediaWithBytes}), those original bytes
 *       ({@code vllm/multimodal/hasher.py} {@code MultiModalHasher.serialize_item}), as lower-case
 *       hex. {@link #identifier} computes exactly that for a base64 data URL. For another URL
 *       (http(s), file) the engine hashes the bytes it fetches, which neither the ingress nor the
 *       sim fetch: both hash the URL text in the bytes' place instead, a documented stand-in that a
 *       real engine's identifier does not match. Older vLLM (before {@code MediaWithBytes}) hashed
 *       the decoded pixels, and {@code VLLM_MM_HASHER_ALGORITHM=sha256} or processor kwargs change
 *       the hash too; then only client uuids line up with a real engine.
 * </ol>
 *
 * <p>Stateless and thread-safe; cost linear in the prompt and the image bytes.
 */
public final class MediaPrompt {

  /**
   * Stands for one image's placeholder in rendered prompt text: private-use characters no client
   * text or template contains by accident.
   */
  public static final String MARKER = "\uE000kvrouter:image\uE001";

  /**
   * How a model expands an image: into {@code imageTokens} copies of token {@code imageTokenId},
   * and which model id its engine hashes images under.
   *
   * @param imageTokens placeholder tokens per image, positive
   * @param imageTokenId the token id of each, non-negative
   * @param engineModelId the engine's {@code model_id} (its {@code --model}), or null for the
   *     served model's name
   */
  public record Settings(int imageTokens, int imageTokenId, String engineModelId) {

    /**
     * 256 tokens per image, as a fixed 224x224 vision encoder with 14-pixel patches gives (16x16
     * patches; PaliGemma-224 and SigLIP-so400m/14 use 256), and Qwen2-VL's {@code <|image_pad|>}
     * id.
     */
    public static final Settings DEFAULTS = new Settings(256, 151655, null);

    public Settings {
      if (imageTokens <= 0 || imageTokenId < 0) {
        throw new IllegalArgumentException(
            "imageTokens must be positive and imageTokenId non-negative, was "
                + imageTokens
                + ", "
                + imageTokenId);
      }
    }

    /** The model id images are hashed under: {@link #engineModelId}, else {@code servedModel}. */
    public String modelId(String servedModel) {
      return engineModelId == null || engineModelId.isBlank() ? servedModel : engineModelId;
    }
  }

  /**
   * One image in a prompt: its identifier and its placeholder tokens {@code [start, start+length)}.
   */
  public record Item(String identifier, int start, int length) {}

  /**
   * One image content part as the client sent it.
   *
   * @param uuid the client's multimodal UUID, or null
   * @param url the image URL: a data URL, or another the engine fetches (http(s), or {@code file:}
   *     under vLLM's {@code --allowed-local-media-path}; the engine decides which it accepts)
   */
  public record Image(String uuid, String url) {}

  /** A content part that names no usable image; the message says what is wrong. */
  public static final class BadImageException extends IllegalArgumentException {
    public BadImageException(String message) {
      super(message);
    }
  }

  private MediaPrompt() {}

  /**
   * The image of a content part, or null when the part is not an image ({@code type} other than
   * {@code image_url}).
   *
   * @throws BadImageException for an image part without a URL or with a malformed data URL
   */
  public static Image image(Object part) {
    if (!(part instanceof Map<?, ?> p) || !"image_url".equals(p.get("type"))) {
      return null;
    }
    Object ref = p.get("image_url");
    Object url = ref instanceof Map<?, ?> m ? m.get("url") : ref;
    if (!(url instanceof String u) || u.isBlank()) {
      throw new BadImageException("an image_url content part needs image_url.url, a string");
    }
    if (u.startsWith("data:")) {
      dataUrlBytes(u);
    }
    Object uuid = p.get("uuid");
    if (uuid != null && !(uuid instanceof String)) {
      throw new BadImageException("a content part's uuid must be a string");
    }
    String id = (String) uuid;
    return new Image(id == null || id.isEmpty() ? null : id, u);
  }

  /**
   * The images of a conversation in prompt order (messages in order, each message's parts in
   * order); empty when there are none.
   *
   * @param messages parsed chat messages ({@code content} a string or a list of parts)
   * @throws BadImageException for a bad image part
   */
  public static List<Image> images(List<? extends Map<String, ?>> messages) {
    List<Image> out = null;
    for (Map<String, ?> m : messages) {
      if (m.get("content") instanceof List<?> parts) {
        for (Object part : parts) {
          Image i = image(part);
          if (i != null) {
            if (out == null) {
              out = new ArrayList<>(2);
            }
            out.add(i);
          }
        }
      }
    }
    return out == null ? List.of() : out;
  }

  /**
   * A list of content parts as vLLM's string content format makes it: one {@link #MARKER} per image
   * part, then the text parts joined with {@code "\n"}, all joined with {@code "\n"}; other parts
   * are dropped. Without image parts this is the text parts joined with {@code "\n"}.
   */
  public static String flatten(List<?> parts) {
    List<String> pieces = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    boolean anyText = false;
    for (Object part : parts) {
      String t = null;
      if (part instanceof Map<?, ?> p && "text".equals(p.get("type")) && p.get("text") != null) {
        t = p.get("text").toString();
      } else if (part instanceof CharSequence cs) {
        t = cs.toString();
      } else if (part instanceof Map<?, ?> p && "image_url".equals(p.get("type"))) {
        pieces.add(MARKER);
      }
      if (t != null) {
        if (anyText) {
          text.append('\n');
        }
        text.append(t);
        anyText = true;
      }
    }
    if (pieces.isEmpty()) {
      return text.toString();
    }
    pieces.add(text.toString());
    return String.join("\n", pieces);
  }

  /**
   * The token ids of rendered prompt text: the text between {@link #MARKER}s through {@code
   * encode}, each marker replaced by {@code settings.imageTokens()} copies of {@code
   * settings.imageTokenId()}. Text without a marker is {@code encode(text)} unchanged.
   */
  public static int[] expand(String rendered, Settings settings, Function<String, int[]> encode) {
    int at = rendered.indexOf(MARKER);
    if (at < 0) {
      return encode.apply(rendered);
    }
    List<int[]> pieces = new ArrayList<>();
    int from = 0;
    int total = 0;
    while (at >= 0) {
      if (at > from) {
        int[] t = encode.apply(rendered.substring(from, at));
        pieces.add(t);
        total += t.length;
      }
      int[] image = new int[settings.imageTokens()];
      java.util.Arrays.fill(image, settings.imageTokenId());
      pieces.add(image);
      total += image.length;
      from = at + MARKER.length();
      at = rendered.indexOf(MARKER, from);
    }
    if (from < rendered.length()) {
      int[] t = encode.apply(rendered.substring(from));
      pieces.add(t);
      total += t.length;
    }
    int[] out = new int[total];
    int pos = 0;
    for (int[] p : pieces) {
      System.arraycopy(p, 0, out, pos, p.length);
      pos += p.length;
    }
    return out;
  }

  /**
   * The placeholder ranges of {@code identifiers.size()} images in {@code tokens}: runs of {@code
   * imageTokenId}, cut into images of {@code imageTokens} tokens, paired in order with the
   * identifiers.
   *
   * @throws BadImageException when the prompt holds another number of image placeholders than
   *     images (a template that drops images; vLLM refuses such a prompt too)
   */
  public static List<Item> locate(int[] tokens, List<String> identifiers, Settings settings) {
    if (identifiers.isEmpty()) {
      return List.of();
    }
    List<Item> out = new ArrayList<>(identifiers.size());
    int n = settings.imageTokens();
    int id = settings.imageTokenId();
    int i = 0;
    while (i < tokens.length) {
      if (tokens[i] != id) {
        i++;
        continue;
      }
      int end = i;
      while (end < tokens.length && tokens[end] == id) {
        end++;
      }
      if ((end - i) % n != 0) {
        throw new BadImageException(
            "the prompt holds a run of " + (end - i) + " image tokens, not a multiple of " + n);
      }
      for (int s = i; s < end; s += n) {
        if (out.size() == identifiers.size()) {
          throw new BadImageException("the prompt holds more image placeholders than images");
        }
        out.add(new Item(identifiers.get(out.size()), s, n));
      }
      i = end;
    }
    if (out.size() != identifiers.size()) {
      throw new BadImageException(
          "the rendered prompt holds "
              + out.size()
              + " image placeholders for "
              + identifiers.size()
              + " images");
    }
    return out;
  }

  /**
   * {@code base} with {@code images} at their placeholder tokens in {@code tokens}, named as an
   * engine serving {@code modelId} names them: what the router keys a chat's blocks with. When the
   * prompt does not hold one placeholder run per image ({@link #locate} refuses it: a template that
   * loops over content parts renders images itself), {@code base} as it is: the keys then differ
   * from the engine's from the first image's block on, and two such prompts with different images
   * in the same place look alike to the router.
   */
  public static ExtraKeys keyExtras(
      ExtraKeys base, List<Image> images, int[] tokens, Settings settings, String modelId) {
    if (images.isEmpty()) {
      return base;
    }
    try {
      return withItems(base, locate(tokens, identifiers(images, modelId), settings));
    } catch (BadImageException e) {
      return base;
    }
  }

  /** {@code base} with every item added ({@link ExtraKeys#withMedia}). */
  public static ExtraKeys withItems(ExtraKeys base, List<Item> items) {
    ExtraKeys out = base;
    for (Item it : items) {
      out = out.withMedia(it.identifier(), it.start(), it.length());
    }
    return out;
  }

  /**
   * The engine's identifier of an image (see the class comment): the client's uuid as it is;
   * otherwise {@code blake3("model_id" + modelId + "image" + bytes)} in hex, the bytes being a data
   * URL's decoded payload (exact, for vLLM with {@code MediaWithBytes}) or any other URL's text (a
   * stand-in: the engine hashes the bytes it fetches).
   */
  public static String identifier(Image image, String modelId) {
    if (image.uuid() != null) {
      return image.uuid();
    }
    byte[] content =
        image.url().startsWith("data:")
            ? dataUrlBytes(image.url())
            : image.url().getBytes(StandardCharsets.UTF_8);
    Blake3 h = Blake3.initHash();
    h.update("model_id".getBytes(StandardCharsets.UTF_8));
    h.update(modelId.getBytes(StandardCharsets.UTF_8));
    h.update("image".getBytes(StandardCharsets.UTF_8));
    h.update(content);
    byte[] digest = h.doFinalize(32);
    StringBuilder hex = new StringBuilder(64);
    for (byte b : digest) {
      hex.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
    }
    return hex.toString();
  }

  /** The identifiers of {@code images} under {@code modelId}, in order. */
  public static List<String> identifiers(List<Image> images, String modelId) {
    List<String> out = new ArrayList<>(images.size());
    for (Image i : images) {
      out.add(identifier(i, modelId));
    }
    return out;
  }

  /**
   * The payload of a base64 data URL ({@code data:[<media type>];base64,<data>}), as vLLM's {@code
   * MediaConnector} reads it ({@code vllm/multimodal/media/connector.py}: media type and {@code
   * base64} before the comma, then {@code b64decode(data, validate=True)}).
   *
   * @throws BadImageException when it is not one
   */
  static byte[] dataUrlBytes(String url) {
    int comma = url.indexOf(',');
    if (comma < 0) {
      throw new BadImageException("a data URL needs a ',' before its data");
    }
    String header = url.substring("data:".length(), comma);
    if (!header.endsWith(";base64")) {
      throw new BadImageException("an image data URL must be base64 ('data:image/png;base64,...')");
    }
    if (!header.startsWith("image/")) {
      throw new BadImageException(
          "an image data URL needs an image media type, was '" + abbreviate(header) + "'");
    }
    String data = url.substring(comma + 1);
    if (data.isEmpty()) {
      throw new BadImageException("the image data URL holds no data");
    }
    try {
      return Base64.getDecoder().decode(data);
    } catch (IllegalArgumentException e) {
      throw new BadImageException("the image data URL is not valid base64: " + e.getMessage());
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 40 ? s : s.substring(0, 40) + "...";
  }
}
