package io.kvrouter.ingress.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Turns the raw bytes of a request body into JSON: strict UTF-8 (invalid sequences are an error,
 * never replaced), then one JSON value with nothing after it.
 */
public final class BodyReader {

  private final ObjectMapper mapper;

  public BodyReader(ObjectMapper mapper) {
    this.mapper = mapper.copy().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  }

  /** Parses {@code bytes}, or throws {@link ApiException} with a 400 saying what is wrong. */
  public JsonNode read(byte[] bytes) {
    if (bytes.length == 0) {
      throw new ApiException(ApiError.invalid("The request body is empty.", null, "empty_body"));
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
      String where =
          e.getLocation() == null
              ? ""
              : " at line "
                  + e.getLocation().getLineNr()
                  + ", column "
                  + e.getLocation().getColumnNr();
      throw new ApiException(
          ApiError.invalid(
              "The request body is not valid JSON" + where + ": " + e.getOriginalMessage(),
              null,
              "invalid_json"));
    }
  }
}
