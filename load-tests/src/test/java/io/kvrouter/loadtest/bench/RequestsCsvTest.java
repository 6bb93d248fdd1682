package io.kvrouter.loadtest.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestsCsvTest {

  @Test
  void oneLinePerRequest_emptyCellsForMissingFigures_quotedFields() throws Exception {
    RequestOutcome ok =
        new RequestOutcome(
            0,
            1,
            "g0",
            RequestOutcome.Status.OK,
            200,
            null,
            1_000_000,
            1_500_000,
            9_000_000,
            new long[] {3_000_000, 4_000_000},
            100,
            2,
            40);
    RequestOutcome failed =
        new RequestOutcome(
            1,
            0,
            "a,b",
            RequestOutcome.Status.HTTP_ERROR,
            500,
            "HTTP 500: \"x\"",
            2_000_000,
            2_000_000,
            2_500_000,
            new long[0],
            -1,
            -1,
            -1);
    RequestOutcome dropped = RequestOutcome.dropped(2, "", 3_000_000);
    StringWriter out = new StringWriter();
    RequestsCsv.write(List.of(ok, failed, dropped), List.of("http://a:1", "http://b:2"), out);
    String[] lines = out.toString().split("\n");
    assertThat(lines).hasSize(4);
    assertThat(lines[0]).isEqualTo(RequestsCsv.HEADER);
    assertThat(lines[1])
        .isEqualTo("0,http://b:2,g0,OK,200,1.000,1.500,2.000,1.500,8.000,7.500,2,100,40,2,");
    assertThat(lines[2])
        .isEqualTo(
            "1,http://a:1,\"a,b\",HTTP_ERROR,500,2.000,2.000,,,,,0,,,,\"HTTP 500: \"\"x\"\"\"");
    assertThat(lines[3]).isEqualTo("2,,,DROPPED,,3.000,,,,,,0,,,,concurrency cap reached");
    assertThat(lines)
        .allSatisfy(
            l ->
                assertThat(l.replaceAll("\"[^\"]*(\"\"[^\"]*)*\"", "q").split(",", -1))
                    .hasSize(16));
  }
}
