package io.kvrouter.ingress.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Turns the raw bytes of a request body into JSON: strict UTF-8 (invalid sequences are an error,
 * never replaced), then one JSON value with nothing after it.
 *
 * <p>A body of printable ASCII and control characters other than NUL (every byte in 1..127, the
 * common case: JSON writers escape what is not ASCII) is valid UTF-8 by construction, and Jackson
 * reads it as UTF-8 straight from the bytes (no NUL byte means its encoding detection cannot take
 * it for UTF-16 or UTF-32). Only other bodies are decoded to a string first, which checks their
 * UTF-8 strictly: on the 130 KB body of a 32k-token chat turn the decode and the char-based parse
 * it forces cost about twice the byte-based parse.
 */
public final class BodyReader {

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long HIGH_BITS = 0x8080808080808080L;
  private static final long LOW_BITS = 0x0101010101010101L;

  private final ObjectMapper mapper;

  public BodyReader(ObjectMapper mapper) {
    this.mapper = mapper.copy().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  }

  /** Parses {@code bytes}, or throws {@link ApiException} with a 400 saying what is wrong. */
  public JsonNode read(byte[] bytes) {
    if (bytes.length == 0) {
      throw new ApiException(ApiError.invalid("The request body is empty.", null, "empty_body"));
    }
    if (asciiWithoutNul(bytes)) {
      try {
        return mapper.readTree(bytes);
      } catch (JsonProcessingException e) {
        throw invalidJson(e);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes))
              .toString();
    } catch (CharacterCodingException e) {
      throw new ApiException(
          ApiError.invalid("The request body is not valid UTF-8.", null, "invalid_encoding"));
    }
    try {
      return mapper.readTree(text);
    } catch (JsonProcessingException e) {
      throw invalidJson(e);
    }
  }

  /** True when every byte is in 1..127, eight at a time. */
  static boolean asciiWithoutNul(byte[] bytes) {
    int i = 0;
    for (int end = bytes.length - 7; i < end; i += 8) {
      long w = (long) LONGS.get(bytes, i);
      // a byte with its high bit set, or a zero byte (the classic has-zero-byte test)
      if ((w & HIGH_BITS) != 0 || ((w - LOW_BITS) & ~w & HIGH_BITS) != 0) {
        return false;
      }
    }
    for (; i < bytes.length; i++) {
      if (bytes[i] <= 0) {
        return false;
      }
    }
    return true;
  }

  private static ApiException invalidJson(JsonProcessingException e) {
    String where =
        e.getLocation() == null
            ? ""
            : " at line "
                + e.getLocation().getLineNr()
                + ", column "
                + e.getLocation().getColumnNr();
    return new ApiException(
        ApiError.invalid(
            "The request body is not valid JSON" + where + ": " + e.getOriginalMessage(),
            null,
            "invalid_json"));
  }
}
