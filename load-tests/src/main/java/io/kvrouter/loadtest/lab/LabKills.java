package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What becomes of the requests a killed replica ({@code --kill-replica}) was serving, and what
 * those already answering cost: each is decided again by its router, either as a client retry (the
 * prompt again, the answer from its start: what a client whose stream broke does) or as a migration
 * (the prompt followed by the tokens already generated, for the tokens left: what the ingress's
 * stream migration sends, routed by prompt and generated tokens together).
 *
 * <p>For each request cut after its first token it records the tokens generated before the kill,
 * the prompt tokens the new replica computed (its uncached prefill: for a migration the generated
 * tokens count as prompt), and the time from the kill to the next new token the client sees and to
 * the answer's end. A retry's first token is one the client has seen: its new text starts once it
 * has generated again as many tokens as before the kill, which is estimated at the retry's mean
 * inter-token time (the lab's engine steps decode passes in runs, without a time per token).
 *
 * <p>Single-threaded; one instance per {@link LabSimulation} run.
 */
public final class LabKills {

  /** How a killed replica's requests go on. */
  enum OnKill {
    RETRY,
    MIGRATE
  }

  /** One request the kill cut after its first token. */
  private static final class Cut {
    final int generated;
    final long killMicros;
    long firstTokenMicros = -1;
    long finishMicros = -1;
    int prefillTokens = -1;
    int tokens;

    Cut(int generated, long killMicros) {
      this.generated = generated;
      this.killMicros = killMicros;
    }
  }

  private final OnKill mode;
  private final Map<String, Cut> cuts = new LinkedHashMap<>();

  LabKills(OnKill mode) {
    this.mode = mode;
  }

  OnKill mode() {
    return mode;
  }

  /**
   * Request {@code s} was live on the replica killed at {@code nowMicros}; returns the id it is
   * decided again under.
   */
  String cut(LabSequence s, long nowMicros) {
    String id = s.requestId + "+";
    if (s.outputs > 0 && s.outputs < s.maxTokens) {
      cuts.put(id, new Cut(s.outputs, nowMicros));
    }
    return id;
  }

  /** Tokens of its earlier answer request {@code requestId} carries as prompt (0: none). */
  int carried(String requestId) {
    Cut c = mode == OnKill.MIGRATE ? cuts.get(requestId) : null;
    return c == null ? 0 : c.generated;
  }

  /** Request {@code s} produced its first token on its new replica. */
  void firstToken(LabSequence s, long timeMicros) {
    Cut c = cuts.get(s.requestId);
    if (c != null && c.firstTokenMicros < 0) {
      c.firstTokenMicros = timeMicros;
      c.prefillTokens = s.promptLength - Math.max(0, s.cachedPromptTokens);
      c.tokens = s.maxTokens;
    }
  }

  /** Request {@code s} finished on its new replica. */
  void finished(LabSequence s, long timeMicros) {
    Cut c = cuts.get(s.requestId);
    if (c != null) {
      c.finishMicros = timeMicros;
    }
  }

  /**
   * The cut requests' figures: how many, the tokens generated before the kill, the tokens their new
   * replicas were asked to generate, the prefill tokens they computed, the tokens decoded again,
   * and the milliseconds from the kill to the next new token the client sees and to the answer's
   * end.
   */
  record Summary(
      OnKill mode,
      int requests,
      long generatedBeforeKill,
      long askedAfterKill,
      long prefillTokens,
      long decodedAgain,
      Latency nextToken,
      Latency finish) {}

  Summary summary() {
    return summary(mode, cuts.values());
  }

  private static Summary summary(OnKill mode, Iterable<Cut> cuts) {
    List<Cut> done = new ArrayList<>();
    for (Cut c : cuts) {
      if (c.firstTokenMicros >= 0 && c.finishMicros >= 0) {
        done.add(c);
      }
    }
    double[] next = new double[done.size()];
    double[] finish = new double[done.size()];
    long generated = 0;
    long asked = 0;
    long prefill = 0;
    for (int i = 0; i < done.size(); i++) {
      Cut c = done.get(i);
      generated += c.generated;
      asked += c.tokens;
      prefill += c.prefillTokens;
      next[i] = (c.firstTokenMicros - c.killMicros) / 1000.0;
      if (mode == OnKill.RETRY && c.tokens > 1) {
        // The retry's first token is one the client has; its new text starts after as many
        // tokens again as were generated before the kill, at the retry's mean inter-token time.
        next[i] += c.generated * (c.finishMicros - c.firstTokenMicros) / 1000.0 / (c.tokens - 1);
      }
      finish[i] = (c.finishMicros - c.killMicros) / 1000.0;
    }
    return new Summary(
        mode,
        done.size(),
        generated,
        asked,
        prefill,
        mode == OnKill.RETRY ? generated : 0,
        Latency.of(next),
        Latency.of(finish));
  }

  /**
   * Replays {@code workload} with {@code policy} twice for each time of {@code killAtMicros}, the
   * replica of {@code config} killed then (one kill a replay), its cut requests retried, then
   * migrated; returns the figures of all the retried cuts, then of all the migrated ones.
   */
  public static List<Summary> compare(
      Workload workload, LabConfig config, String policy, long... killAtMicros) {
    if (config.killReplica() < 0 || killAtMicros.length == 0) {
      throw new IllegalArgumentException("comparing what a kill costs needs a replica killed");
    }
    PromptKeys keys = PolicyLab.keys(workload, config);
    List<Summary> out = new ArrayList<>();
    for (OnKill mode : OnKill.values()) {
      List<Cut> all = new ArrayList<>();
      for (long at : killAtMicros) {
        LabConfig killed =
            config.withChaos(config.killReplica(), at, config.dropEvents(), config.burst());
        LabSimulation run = new LabSimulation(workload, keys, killed, policy).onKill(mode);
        run.run();
        all.addAll(run.kills().cuts.values());
      }
      out.add(summary(mode, all));
    }
    return out;
  }

  /** The figures of {@link #compare} as a Markdown table. */
  public static String markdown(List<Summary> summaries) {
    StringBuilder md = new StringBuilder();
    md.append(
        "| requests cut mid-answer go on as | requests | tokens generated before the kill"
            + " | prefill tokens computed again | tokens decoded again"
            + " | kill to next new token p50 / p90 (ms) | kill to answer's end p50 / p90 (ms) |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (Summary s : summaries) {
      md.append(
          String.format(
              java.util.Locale.ROOT,
              "| %s | %d | %d | %d | %d | %.0f / %.0f | %.0f / %.0f |%n",
              s.mode() == OnKill.RETRY ? "client retry" : "migration",
              s.requests(),
              s.generatedBeforeKill(),
              s.prefillTokens(),
              s.decodedAgain(),
              s.nextToken().p50(),
              s.nextToken().p90(),
              s.finish().p50(),
              s.finish().p90()));
    }
    return md.toString();
  }
}
