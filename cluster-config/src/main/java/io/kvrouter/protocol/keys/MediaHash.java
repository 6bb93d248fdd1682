package io.kvrouter.protocol.keys;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;
import org.apache.commons.codec.digest.Blake3;

/**
 * vLLM's identifier of an image in a request (its {@code mm_hash}): what enters the engine's block
 * hashes as the multimodal extra key of every block the image's placeholder tokens overlap, and
 * what the engine's KV events carry in {@code extra_keys}. The ingress computes it from the
 * request's image so that its block keys equal those the agent derives from the engine's events.
 *
 * <p>Definition (vLLM main, {@code vllm/multimodal/processing/inputs.py} {@code
 * ProcessorInputs.get_mm_hashes}, and {@code vllm/multimodal/hasher.py} {@code
 * MultiModalHasher.hash_kwargs}, read in vllm-project/vllm and in the vMaroon/vllm fork of main at
 * 08ee3e54): {@code hash_kwargs(model_id=<model>, image=<item>)} feeds the hasher, for each keyword
 * in order, the key's UTF-8 bytes and then the value's bytes; a model id string is its UTF-8 bytes;
 * an image the client sent as bytes (a {@code MediaWithBytes}) is its original encoded bytes (the
 * PNG or JPEG file, not the decoded pixels). The digest is the lowercase hex of BLAKE3 (the
 * default; {@code VLLM_MM_HASHER_ALGORITHM} may choose {@code sha256} or {@code sha512}). Models
 * with processor keyword arguments ({@code mm_processor_kwargs}) hash those too and are not
 * covered. A client-supplied {@code uuid} for the item replaces the hash (vLLM's {@code
 * multi_modal_uuids}).
 *
 * <p>Stateless and thread-safe. Cost: one BLAKE3 pass over the image (about 1 GB/s in Java).
 */
public final class MediaHash {

  /** The hash functions vLLM's {@code VLLM_MM_HASHER_ALGORITHM} chooses among. */
  public enum Algorithm {
    BLAKE3,
    SHA256,
    SHA512;

    /** Parses a configuration value ({@code blake3}, {@code sha256}, {@code sha512}). */
    public static Algorithm of(String name) {
      return valueOf(name.trim().toUpperCase(Locale.ROOT));
    }
  }

  private MediaHash() {}

  /** {@link #imageIdentifier(String, byte[], Algorithm)} with BLAKE3, vLLM's default. */
  public static String imageIdentifier(String model, byte[] imageBytes) {
    return imageIdentifier(model, imageBytes, Algorithm.BLAKE3);
  }

  /**
   * The identifier vLLM gives an image of {@code model} sent as {@code imageBytes}.
   *
   * @param model the served model name vLLM passes as {@code model_id}
   * @param imageBytes the image file as the client sent it (a {@code data:} URL's decoded payload)
   */
  public static String imageIdentifier(String model, byte[] imageBytes, Algorithm algorithm) {
    byte[][] parts = {
      "model_id".getBytes(StandardCharsets.UTF_8),
      model.getBytes(StandardCharsets.UTF_8),
      "image".getBytes(StandardCharsets.UTF_8),
      imageBytes
    };
    byte[] digest;
    if (algorithm == Algorithm.BLAKE3) {
      Blake3 hasher = Blake3.initHash();
      for (byte[] p : parts) {
        hasher.update(p);
      }
      digest = hasher.doFinalize(32);
    } else {
      try {
        var md =
            java.security.MessageDigest.getInstance(
                algorithm == Algorithm.SHA256 ? "SHA-256" : "SHA-512");
        for (byte[] p : parts) {
          md.update(p);
        }
        digest = md.digest();
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }
    return HexFormat.of().formatHex(digest);
  }

  /**
   * The bytes of a {@code data:} URL ({@code data:image/png;base64,...}), or {@code null} when
   * {@code url} is not a base64 data URL (an {@code http(s)} URL, whose bytes only the engine
   * fetches).
   *
   * @throws IllegalArgumentException when the base64 payload is malformed
   */
  public static byte[] dataUrlBytes(String url) {
    if (url == null || !url.startsWith("data:")) {
      return null;
    }
    int comma = url.indexOf(',');
    if (comma < 0 || !url.substring(0, comma).endsWith(";base64")) {
      return null;
    }
    return Base64.getMimeDecoder().decode(url.substring(comma + 1));
  }
}
