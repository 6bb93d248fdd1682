package io.kvrouter.loadtest.bench;

import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * Where a benchmark run takes its requests from: an iterator of {@link BenchRequest}s in
 * non-decreasing {@link BenchRequest#offsetNanos() offset} order, plus a name for reports.
 *
 * <p>Contract: {@link #next()} is called by the runner's single scheduling thread only, just before
 * each request is due, so a source may build prompts lazily (cost: whatever building one request
 * costs, spread over the run). An offset earlier than its predecessor's is sent at once. The runner
 * stops at the first of: the source is exhausted, {@code --requests} reached, the next offset lies
 * beyond {@code --duration}.
 *
 * <p>To plug another workload in, map each of its records to a {@link BenchRequest} with {@link
 * #adapt}: for example a trace record with an arrival time in microseconds, prompt token ids and an
 * output length becomes {@code new BenchRequest(r.arrivalMicros() * 1000, null,
 * BenchPrompt.tokens(r.promptTokenIds()), r.outputLength(), r.session())}; a speed-up divides the
 * arrival time.
 */
public interface BenchRequestSource extends Iterator<BenchRequest> {

  /** A short name for reports, e.g. {@code shared-prefix}. */
  String name();

  /** Number of requests this source will yield, or -1 if unknown (used by the progress bar). */
  default int sizeHint() {
    return -1;
  }

  /** A source over a fixed list, in list order. */
  static BenchRequestSource of(String name, List<BenchRequest> requests) {
    return adapt(name, requests, Function.identity(), requests.size());
  }

  /**
   * A source that maps each element of {@code items} to a request lazily, when the runner asks for
   * it.
   *
   * @param sizeHint number of items, or -1 if unknown
   */
  static <T> BenchRequestSource adapt(
      String name, Iterable<T> items, Function<? super T, BenchRequest> mapping, int sizeHint) {
    Iterator<T> it = items.iterator();
    return new BenchRequestSource() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public int sizeHint() {
        return sizeHint;
      }

      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public BenchRequest next() {
        if (!it.hasNext()) {
          throw new NoSuchElementException();
        }
        return mapping.apply(it.next());
      }
    };
  }
}
