package io.kvrouter.loadtest.workload;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a trace in the Mooncake format (kvcache-ai/Mooncake, {@code FAST25-release/traces},
 * Apache-2.0): one JSON object per line with {@code timestamp} (ms from the start), {@code
 * input_length}, {@code output_length} (tokens) and {@code hash_ids}, one chained id per 512-token
 * block of the prompt, {@code len(hash_ids) == ceil(input_length / 512)}. Unknown fields are
 * ignored, blank lines skipped.
 *
 * <p>Each request's prompt is the lazy expansion of its hash ids by a {@link TokenExpander} with
 * the given seed: block {@code i} becomes 512 tokens derived from {@code hash_ids[i]} alone (the
 * ids are already chained, so equal id prefixes give equal token prefixes), the last block
 * truncated to {@code input_length}.
 *
 * <p>Sessions: a line may carry an optional {@code session_id} (a string or an integer; the
 * Mooncake format plus one field, issue 55): the request's session is its text, and its turn the
 * number of earlier lines of that session. Without it the session is {@code ""} (the published
 * traces have none) and {@link #programs} infers the programs from the blocks.
 *
 * <p>Contract: a malformed line (bad JSON, missing or negative field, non-integral id, id count not
 * matching the length) raises {@link TraceFormatException} naming the file and 1-based line number;
 * requests keep the trace's line order among equal timestamps.
 *
 * <p>Cost: one pass, O(total hash ids) time; memory ~20 bytes per hash id plus ~150 bytes per
 * request. The conversation trace (12,031 lines, 3 MB) reads in well under a second.
 */
public final class MooncakeTraceReader {

  /** Tokens per hash id in the Mooncake traces. */
  public static final int BLOCK_TOKENS = 512;

  private static final ObjectMapper JSON = new ObjectMapper();

  private MooncakeTraceReader() {}

  /**
   * Reads the whole trace.
   *
   * @param name workload name to report (e.g. {@code mooncake-conversation})
   * @param seed seed of the token expansion
   * @throws TraceFormatException on a malformed line
   * @throws UncheckedIOException if the file cannot be read
   */
  public static Workload read(Path file, String name, long seed) {
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return read(in, file.toString(), name, seed);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read trace " + file, e);
    }
  }

  /**
   * Reads the whole trace from an open reader (a bundled trace, say); the caller closes it.
   *
   * @param source where the lines come from, named in error messages
   * @throws TraceFormatException on a malformed line
   * @throws UncheckedIOException if the reader fails
   */
  public static Workload read(BufferedReader in, String source, String name, long seed) {
    TokenExpander expander = new TokenExpander(seed);
    List<WorkloadRequest> requests = new ArrayList<>();
    java.util.Map<String, Integer> turns = new java.util.HashMap<>();
    try {
      String line;
      long lineNumber = 0;
      while ((line = in.readLine()) != null) {
        lineNumber++;
        if (line.isBlank()) {
          continue;
        }
        requests.add(parseLine(source, lineNumber, line, requests.size(), expander, turns));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read trace " + source, e);
    }
    return Workload.of(name, seed, BLOCK_TOKENS, requests);
  }

  static WorkloadRequest parseLine(
      String file,
      long lineNumber,
      String line,
      int index,
      TokenExpander expander,
      java.util.Map<String, Integer> turns) {
    JsonNode node;
    try {
      node = JSON.readTree(line);
    } catch (JsonProcessingException e) {
      throw new TraceFormatException(
          file, lineNumber, "not valid JSON: " + e.getOriginalMessage(), e);
    }
    if (node == null || !node.isObject()) {
      throw new TraceFormatException(file, lineNumber, "expected a JSON object", null);
    }
    double timestampMs = number(file, lineNumber, node, "timestamp");
    long inputLength = integral(file, lineNumber, node, "input_length");
    long outputLength = integral(file, lineNumber, node, "output_length");
    if (inputLength < 1 || inputLength > Integer.MAX_VALUE) {
      throw new TraceFormatException(
          file, lineNumber, "input_length must be in [1, 2^31), got " + inputLength, null);
    }
    if (outputLength > Integer.MAX_VALUE) {
      throw new TraceFormatException(
          file, lineNumber, "output_length too large: " + outputLength, null);
    }
    JsonNode ids = node.get("hash_ids");
    if (ids == null || !ids.isArray()) {
      throw new TraceFormatException(file, lineNumber, "missing array field 'hash_ids'", null);
    }
    long[] hashIds = new long[ids.size()];
    for (int i = 0; i < hashIds.length; i++) {
      JsonNode id = ids.get(i);
      if (!id.isIntegralNumber() || !id.canConvertToLong()) {
        throw new TraceFormatException(
            file, lineNumber, "hash_ids[" + i + "] is not a 64-bit integer: " + id, null);
      }
      hashIds[i] = id.longValue();
    }
    long expectedIds = (inputLength + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
    if (hashIds.length != expectedIds) {
      throw new TraceFormatException(
          file,
          lineNumber,
          "input_length "
              + inputLength
              + " needs ceil("
              + inputLength
              + "/"
              + BLOCK_TOKENS
              + ") = "
              + expectedIds
              + " hash_ids, found "
              + hashIds.length,
          null);
    }
    PromptTokens prompt = PromptTokens.ofBlocks(expander, hashIds, (int) inputLength, BLOCK_TOKENS);
    long arrivalMicros = Math.round(timestampMs * 1000.0);
    String session = session(file, lineNumber, node);
    int turn = session.isEmpty() ? 0 : turns.merge(session, 1, Integer::sum) - 1;
    return new WorkloadRequest(
        index, arrivalMicros, session, turn, prompt, (int) outputLength, hashIds);
  }

  /** The optional {@code session_id}: a non-empty string or an integer; {@code ""} when absent. */
  private static String session(String file, long lineNumber, JsonNode node) {
    JsonNode v = node.get("session_id");
    if (v == null || v.isNull()) {
      return "";
    }
    if (v.isIntegralNumber() || (v.isTextual() && !v.asText().isEmpty())) {
      return v.asText();
    }
    throw new TraceFormatException(
        file, lineNumber, "session_id must be a non-empty string or an integer, got " + v, null);
  }

  /**
   * The programs of a trace: from its {@code session_id}s where the lines carry them ({@link
   * Programs#fromSessions}), else inferred from the blocks. A request continues the program of the
   * latest earlier request of at least two full blocks whose whole prompt but its last block it
   * starts with (the previous turn of a conversation, whose partial last block the next turn
   * fills); a request that continues none opens a program of its own. Turns keep their recorded
   * arrivals (open loop), and nothing is known of tool calls. A heuristic: two sessions that send
   * the same first turn are taken as one. O(total blocks) with one map entry per request.
   */
  public static Programs programs(Workload trace) {
    boolean sessions = trace.stream().anyMatch(r -> !r.session().isEmpty());
    if (sessions) {
      return Programs.fromSessions(trace);
    }
    java.util.Map<Long, String> byLastFullBlock = new java.util.HashMap<>();
    java.util.Map<String, Programs.Step> steps = new java.util.HashMap<>();
    for (WorkloadRequest r : trace.requests()) {
      long[] ids = r.traceBlockIds();
      String program = null;
      for (int k = ids.length - 1; k >= 0 && program == null; k--) {
        program = byLastFullBlock.get(ids[k]);
      }
      if (program == null) {
        program = "program-" + r.index();
      }
      steps.put(Programs.key(r), new Programs.Step(program, List.of(), 0, false));
      int full = ids.length - 1; // the last block may be partial: the next turn rewrites it
      if (full >= 2) { // one full block is no more than the prompt all conversations open with
        byLastFullBlock.put(ids[full - 1], program);
      }
    }
    return new Programs(steps);
  }

  private static double number(String file, long lineNumber, JsonNode node, String field) {
    JsonNode v = node.get(field);
    if (v == null || !v.isNumber()) {
      throw new TraceFormatException(
          file, lineNumber, "missing numeric field '" + field + "'", null);
    }
    double d = v.doubleValue();
    if (!(d >= 0) || Double.isInfinite(d)) {
      throw new TraceFormatException(
          file, lineNumber, "'" + field + "' must be >= 0, got " + v, null);
    }
    return d;
  }

  private static long integral(String file, long lineNumber, JsonNode node, String field) {
    JsonNode v = node.get(field);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
      throw new TraceFormatException(
          file, lineNumber, "missing integer field '" + field + "'", null);
    }
    long x = v.longValue();
    if (x < 0) {
      throw new TraceFormatException(
          file, lineNumber, "'" + field + "' must be >= 0, got " + x, null);
    }
    return x;
  }
}
