package io.kvrouter.loadtest.bench;

import java.io.IOException;
import java.io.Writer;
import java.util.List;
import java.util.Locale;

/**
 * One line per request, for plotting and digging ({@code requests.csv}): when it was due and sent,
 * where it went, how it ended, TTFT and end-to-end in both views, chunk count and usage. Times in
 * milliseconds from the start of the run; empty cells where a figure does not exist (no first
 * chunk, not sent, not reported). RFC 4180 quoting for the group and error columns.
 *
 * <p>Stateless; cost: O(requests) lines of about 100 bytes.
 */
public final class RequestsCsv {

  /** The header line. */
  public static final String HEADER =
      "index,target,group,status,http_status,intended_ms,sent_ms,ttft_ms,"
          + "ttft_uncorrected_ms,e2e_ms,e2e_uncorrected_ms,chunks,prompt_tokens,cached_tokens,completion_tokens,error";

  private RequestsCsv() {}

  /** Writes the header and one line per outcome, in run order. */
  public static void write(List<RequestOutcome> outcomes, List<String> targets, Writer out)
      throws IOException {
    out.write(HEADER);
    out.write('\n');
    StringBuilder line = new StringBuilder(160);
    for (RequestOutcome o : outcomes) {
      line.setLength(0);
      boolean sent = o.sentNanos() >= 0;
      boolean done = sent && o.endNanos() >= 0;
      boolean ok = o.status() == RequestOutcome.Status.OK;
      line.append(o.index())
          .append(',')
          .append(
              o.target() >= 0 && o.target() < targets.size() ? quote(targets.get(o.target())) : "")
          .append(',')
          .append(quote(o.group()))
          .append(',')
          .append(o.status())
          .append(',')
          .append(o.httpStatus() > 0 ? String.valueOf(o.httpStatus()) : "")
          .append(',')
          .append(ms(o.intendedNanos()))
          .append(',')
          .append(sent ? ms(o.sentNanos()) : "")
          .append(',')
          .append(sent && o.hasFirstChunk() ? ms(o.ttftCorrectedNanos()) : "")
          .append(',')
          .append(sent && o.hasFirstChunk() ? ms(o.ttftUncorrectedNanos()) : "")
          .append(',')
          .append(done && ok ? ms(o.e2eCorrectedNanos()) : "")
          .append(',')
          .append(done && ok ? ms(o.e2eUncorrectedNanos()) : "")
          .append(',')
          .append(o.chunkNanos().length)
          .append(',')
          .append(count(o.promptTokens()))
          .append(',')
          .append(count(o.cachedTokens()))
          .append(',')
          .append(count(o.completionTokens()))
          .append(',')
          .append(o.error() == null ? "" : quote(o.error()))
          .append('\n');
      out.write(line.toString());
    }
  }

  private static String ms(long nanos) {
    return String.format(Locale.ROOT, "%.3f", nanos / 1e6);
  }

  private static String count(int v) {
    return v < 0 ? "" : String.valueOf(v);
  }

  /** RFC 4180: quote when the field holds a comma, quote, CR or LF; double inner quotes. */
  static String quote(String s) {
    if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0 && s.indexOf('\r') < 0) {
      return s;
    }
    return '"' + s.replace("\"", "\"\"") + '"';
  }
}
