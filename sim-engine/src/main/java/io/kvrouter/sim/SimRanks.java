package io.kvrouter.sim;

import com.sun.net.httpserver.Headers;
import java.util.List;

/**
 * The data-parallel ranks behind one simulated engine's HTTP port, and which one serves a request.
 *
 * <p>As vLLM's OpenAI server does: a request naming a rank in the {@code X-data-parallel-rank}
 * header goes to that rank (vllm-project/vllm {@code vllm/entrypoints/openai/engine/serving.py},
 * {@code _get_data_parallel_rank}; a rank outside {@code [0, size)} is refused with a 400, as the
 * engine's input processor refuses it); any other goes to the least loaded rank, scored as vLLM's
 * internal load balancer scores them, {@code 4 × waiting + running} ({@code
 * vllm/v1/engine/core_client.py}, {@code DPLBAsyncMPClient.get_core_engine_for_request}), the
 * lowest rank on ties. Like vLLM's front end between two stats updates from its engines, it counts
 * the requests it handed a rank and has not seen finish on top of the rank's last reported figures,
 * so a burst does not all land on one rank. Thread-safe.
 */
final class SimRanks {

  /** The header vLLM reads the rank from (HTTP header names are case-insensitive). */
  static final String HEADER = "X-data-parallel-rank";

  private final List<RealTimeEngine> engines;
  private final java.util.concurrent.atomic.AtomicIntegerArray handed;

  SimRanks(List<RealTimeEngine> engines) {
    if (engines.isEmpty()) {
      throw new IllegalArgumentException("an engine has at least one rank");
    }
    this.engines = List.copyOf(engines);
    this.handed = new java.util.concurrent.atomic.AtomicIntegerArray(engines.size());
  }

  /** The request {@link #pick} handed {@code engine} finished (or failed). */
  void done(RealTimeEngine engine) {
    handed.decrementAndGet(engines.indexOf(engine));
  }

  /** Rank 0's engine (shape and config are the same on every rank). */
  RealTimeEngine first() {
    return engines.get(0);
  }

  List<RealTimeEngine> all() {
    return engines;
  }

  /** The engine that serves a request with these headers; the caller tells {@link #done}. */
  RealTimeEngine pick(Headers headers) {
    RealTimeEngine e = choose(headers);
    handed.incrementAndGet(engines.indexOf(e));
    return e;
  }

  private RealTimeEngine choose(Headers headers) {
    String named = headers == null ? null : headers.getFirst(HEADER);
    if (named != null) {
      int rank;
      try {
        rank = Integer.parseInt(named.trim());
      } catch (NumberFormatException e) {
        rank = -1; // vLLM ignores an unparsable header
      }
      if (rank >= 0) {
        for (RealTimeEngine e : engines) {
          if (e.dpRank() == rank) {
            return e;
          }
        }
        throw SimApiError.badRequest(
            "data_parallel_rank "
                + rank
                + " is out of range [0, "
                + (first().dpRank() + engines.size())
                + ")",
            null);
      }
    }
    RealTimeEngine best = engines.get(0);
    int bestScore = Integer.MAX_VALUE;
    for (int i = 0; i < engines.size(); i++) {
      RealTimeEngine.Stats s = engines.get(i).stats();
      int score = 4 * s.waiting() + Math.max(s.running(), handed.get(i));
      if (score < bestScore) {
        best = engines.get(i);
        bestScore = score;
      }
    }
    return best;
  }
}
