package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MooncakeTraceReaderTest {

  @TempDir Path dir;

  private Path write(String... lines) throws IOException {
    Path file = dir.resolve("t.jsonl");
    Files.write(file, Arrays.asList(lines));
    return file;
  }

  @Test
  void conversationTrace_readsAllRequestsWithLengthsAndArrivals() {
    Workload trace = Traces.conversation();
    assertThat(trace.size()).isEqualTo(12_031);
    assertThat(trace.blockTokens()).isEqualTo(512);
    WorkloadRequest first = trace.get(0);
    assertThat(first.inputLength()).isEqualTo(6758);
    assertThat(first.outputLength()).isEqualTo(500);
    assertThat(first.traceBlockIds()).hasSize(14).startsWith(0L, 1L, 2L);
    assertThat(first.promptTokenIds()).hasSize(6758);
    assertThat(trace.durationMicros() / 1_000_000).isBetween(3_500L, 3_600L);
    for (int i = 1; i < trace.size(); i++) {
      assertThat(trace.get(i).arrivalMicros())
          .isGreaterThanOrEqualTo(trace.get(i - 1).arrivalMicros());
      assertThat(trace.get(i).index()).isEqualTo(i);
    }
  }

  @Test
  void equalHashIdPrefixes_giveEqualTokenPrefixes_upToTheFirstDifferingId() {
    Workload trace = Traces.conversation();
    WorkloadRequest a = trace.get(66); // ids 0, 1541, 1542, 1543, 1544, 1545, ...
    WorkloadRequest b = trace.get(133); // ids 0, 1541, 1542, 1543, 1544, 3753, ...
    assertThat(Arrays.copyOf(b.traceBlockIds(), 5))
        .containsExactly(Arrays.copyOf(a.traceBlockIds(), 5));
    assertThat(b.traceBlockIds()[5]).isNotEqualTo(a.traceBlockIds()[5]);
    int[] ta = a.promptTokenIds();
    int[] tb = b.promptTokenIds();
    assertThat(Arrays.copyOf(tb, 5 * 512)).containsExactly(Arrays.copyOf(ta, 5 * 512));
    assertThat(Arrays.copyOfRange(tb, 5 * 512, 5 * 512 + 16))
        .isNotEqualTo(Arrays.copyOfRange(ta, 5 * 512, 5 * 512 + 16));
  }

  @Test
  void truncatedLastBlock_isAPrefixOfTheSameIdsFullBlock() throws IOException {
    Path file =
        write(
            "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2]}",
            "{\"timestamp\": 1, \"input_length\": 1500, \"output_length\": 5, \"hash_ids\": [1, 2, 3]}");
    Workload w = Workloads.fromTrace(file, 9);
    int[] shorter = w.get(0).promptTokenIds();
    int[] longer = w.get(1).promptTokenIds();
    assertThat(shorter).hasSize(600);
    assertThat(longer).hasSize(1500);
    assertThat(Arrays.copyOf(longer, 600)).containsExactly(shorter);
  }

  @Test
  void differentHashIds_giveDifferentTokens_fromTheFirstDifferingBlock() {
    Workload trace = Traces.conversation();
    int[] a = trace.get(0).promptTokenIds(); // ids 0, 1, ...
    int[] b = trace.get(1).promptTokenIds(); // ids 0, 14, ...
    assertThat(Arrays.copyOf(a, 512)).containsExactly(Arrays.copyOf(b, 512));
    assertThat(Arrays.copyOfRange(a, 512, 528)).isNotEqualTo(Arrays.copyOfRange(b, 512, 528));
    assertThat(a[512]).isNotEqualTo(b[512]);
  }

  @Test
  void tokenIds_dependOnTheSeed_butNotOnTheRead() throws IOException {
    Path file =
        write(
            "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [7, 8]}");
    int[] once = Workloads.fromTrace(file, 3).get(0).promptTokenIds();
    int[] again = Workloads.fromTrace(file, 3).get(0).promptTokenIds();
    int[] otherSeed = Workloads.fromTrace(file, 4).get(0).promptTokenIds();
    assertThat(again).containsExactly(once);
    assertThat(otherSeed).isNotEqualTo(once);
    assertThat(java.util.Arrays.stream(once).min().getAsInt()).isNotNegative();
    assertThat(java.util.Arrays.stream(once).max().getAsInt()).isLessThan(TokenExpander.VOCAB_SIZE);
  }

  @Test
  void syntheticTrace_readsAllRequests() {
    assertThat(Traces.synthetic().size()).isEqualTo(3_993);
  }

  @Test
  void fromTrace_namesTheWorkloadAfterTheFile_andSkipsBlankLines() throws IOException {
    Path file =
        write(
            "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 0, \"hash_ids\": [1], \"extra\": 1}",
            "",
            "{\"timestamp\": 7.5, \"input_length\": 513, \"output_length\": 1, \"hash_ids\": [1, 2]}");
    Workload w = Workloads.fromTrace(file);
    assertThat(w.name()).isEqualTo("t");
    assertThat(w.size()).isEqualTo(2);
    assertThat(w.get(0).arrivalMicros()).isEqualTo(5_000);
    assertThat(w.get(1).arrivalMicros()).isEqualTo(7_500);
    assertThat(w.speedUp(2).get(1).arrivalMicros()).isEqualTo(3_750);
  }

  @Test
  void invalidJson_isReportedWithItsLineNumber() throws IOException {
    Path file =
        write(
            "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}",
            "{\"timestamp\": 0, \"input_length\": 1,");
    assertThatThrownBy(() -> Workloads.fromTrace(file))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageContaining("t.jsonl:2: not valid JSON")
        .satisfies(e -> assertThat(((TraceFormatException) e).lineNumber()).isEqualTo(2));
  }

  @Test
  void missingField_isReportedWithItsLineNumberAndName() throws IOException {
    Path file = write("", "{\"timestamp\": 0, \"output_length\": 1, \"hash_ids\": [1]}");
    assertThatThrownBy(() -> Workloads.fromTrace(file))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageContaining(":2: missing integer field 'input_length'");
  }

  @Test
  void hashIdCountNotMatchingInputLength_isReported() throws IOException {
    Path file =
        write(
            "{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 1, \"hash_ids\": [1, 2]}");
    assertThatThrownBy(() -> Workloads.fromTrace(file))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageContaining(":1: input_length 1025 needs ceil(1025/512) = 3 hash_ids, found 2");
  }

  @Test
  void nonIntegralHashIdOrNegativeTimestamp_isReported() throws IOException {
    Path ids =
        write(
            "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [\"x\"]}");
    assertThatThrownBy(() -> Workloads.fromTrace(ids))
        .hasMessageContaining(":1: hash_ids[0] is not a 64-bit integer");
    Path ts =
        write("{\"timestamp\": -1, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1]}");
    assertThatThrownBy(() -> Workloads.fromTrace(ts))
        .hasMessageContaining(":1: 'timestamp' must be >= 0");
  }

  @Test
  void sessionId_namesTheSession_andTurnsCountItsLines() throws IOException {
    Path file =
        write(
            "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2],"
                + " \"session_id\": \"a\"}",
            "{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [9],"
                + " \"session_id\": 7}",
            "{\"timestamp\": 2, \"input_length\": 1100, \"output_length\": 5, \"hash_ids\": [1, 3,"
                + " 4], \"session_id\": \"a\"}",
            "{\"timestamp\": 3, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [8]}");
    Workload w = Workloads.fromTrace(file);
    assertThat(w.requests())
        .extracting(WorkloadRequest::session, WorkloadRequest::turn)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("a", 0),
            org.assertj.core.groups.Tuple.tuple("7", 0),
            org.assertj.core.groups.Tuple.tuple("a", 1),
            org.assertj.core.groups.Tuple.tuple("", 0));
    Programs programs = MooncakeTraceReader.programs(w);
    assertThat(programs.of(w.get(2)).program()).isEqualTo("a");
    assertThat(programs.of(w.get(3)).program()).isEqualTo("request-3");
    assertThat(programs.of(w.get(2)).after()).isEmpty(); // a trace's turns keep their arrivals
  }

  @Test
  void badSessionId_isReported() throws IOException {
    Path file =
        write(
            "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1],"
                + " \"session_id\": [1]}");
    assertThatThrownBy(() -> Workloads.fromTrace(file))
        .isInstanceOf(TraceFormatException.class)
        .hasMessageContaining(":1: session_id must be a non-empty string or an integer");
  }

  @Test
  void withoutSessionIds_aTurnThatExtendsAnEarlierPrompt_continuesItsProgram() throws IOException {
    Path file =
        write(
            // a conversation: 3 blocks, then its next turn extends the first two whole blocks
            "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 5, \"hash_ids\": [0, 1,"
                + " 2]}",
            "{\"timestamp\": 1, \"input_length\": 1100, \"output_length\": 5, \"hash_ids\": [0, 5,"
                + " 6]}",
            "{\"timestamp\": 2, \"input_length\": 2000, \"output_length\": 5, \"hash_ids\": [0, 1,"
                + " 3, 4]}",
            // shares only the first block, which every conversation opens with
            "{\"timestamp\": 3, \"input_length\": 1100, \"output_length\": 5, \"hash_ids\": [0, 7,"
                + " 8]}");
    Workload w = Workloads.fromTrace(file);
    Programs programs = MooncakeTraceReader.programs(w);
    assertThat(programs.of(w.get(2)).program()).isEqualTo(programs.of(w.get(0)).program());
    assertThat(programs.of(w.get(1)).program()).isNotEqualTo(programs.of(w.get(0)).program());
    assertThat(programs.of(w.get(3)).program())
        .isNotIn(programs.of(w.get(0)).program(), programs.of(w.get(1)).program());
  }
}
