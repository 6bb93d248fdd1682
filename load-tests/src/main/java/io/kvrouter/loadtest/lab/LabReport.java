package io.kvrouter.loadtest.lab;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@code report.md}: the command, the run's settings, the single-cache bounds, the policies' table
 * (the same figures as {@code results.json}) and links to the charts. Stateless; O(policies).
 */
public final class LabReport {

  private LabReport() {}

  /** The Markdown text. */
  public static String render(LabResults r, List<String> charts) {
    LabConfig c = r.config();
    StringBuilder sb = new StringBuilder();
    sb.append("# Policy lab: ").append(r.workload()).append("\n\n");
    sb.append("```\n").append(r.command()).append("\n```\n\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "%d requests, %d replicas, %d router(s), capacity %s, block size %d, propagation delay"
                + " %.1f ms, seed %d%s. Wall time %.1f s.%n%n",
            r.requests(),
            c.replicas(),
            c.routers(),
            c.capacityBlocks() == 0 ? "unlimited" : c.capacityBlocks() + " blocks per replica",
            c.blockSize(),
            c.propagationDelayMicros() / 1000.0,
            c.seed(),
            chaos(c),
            r.wallMillis() / 1000.0));
    sb.append(
        String.format(
            Locale.ROOT,
            "Single unlimited cache: hit rate %.4f (tokens, engine measure), block hit rate %.4f.%n",
            r.bound().tokenRate(),
            r.bound().blockRate()));
    if (r.bound().pooledBlocks() > 0) {
      sb.append(
          String.format(
              Locale.ROOT,
              "One LRU cache of every replica's capacity (%d blocks), nothing held twice: hit rate"
                  + " %.4f (what the capacity holds under the engines' eviction; separate caches"
                  + " can hold a little more or less).%n",
              r.bound().pooledBlocks(),
              r.bound().pooledTokenRate()));
    }
    sb.append('\n');
    sb.append(
        "| policy | hit_rate | block_hit_rate | TTFT p50 ms | TTFT p90 ms | TTFT p99 ms"
            + " | e2e p50 ms | e2e p99 ms | throughput rps | load max/mean | decisions |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (PolicyResult p : r.policies()) {
      sb.append(
          String.format(
              Locale.ROOT,
              "| %s | %.4f | %s | %.1f | %.1f | %.1f | %.0f | %.0f | %.3f | %.3f | %d |%n",
              p.policy(),
              p.hitRate(),
              p.blockHitRate() == null
                  ? "n/a"
                  : String.format(Locale.ROOT, "%.4f", p.blockHitRate()),
              p.ttft().p50(),
              p.ttft().p90(),
              p.ttft().p99(),
              p.e2e().p50(),
              p.e2e().p99(),
              p.throughputRps(),
              p.loadMaxOverMean(),
              p.decisions()));
    }
    sb.append('\n');
    appendPrograms(sb, r);
    appendCpuTier(sb, r);
    appendAdapters(sb, r);
    appendSessions(sb, r);
    LabConfig ic = r.config();
    if (ic.images() > 0) {
      sb.append(
          String.format(
              Locale.ROOT,
              "Images: %d (Zipf %.2f), %d placeholder tokens each after the first trace block, keyed"
                  + " with the image; routers that tell images apart: kvrouter, dynamo_kv,"
                  + " llmd_precise, tgi_trie (the others route on the text alone).%n%n",
              ic.images(),
              ic.imageZipf(),
              ic.imageTokens()));
    }
    sb.append(
        "hit_rate: cached prompt tokens ÷ prompt tokens as the engines count them;"
            + " block_hit_rate: leading trace blocks already held by the chosen replica ÷ trace blocks"
            + " (the published figures' measure); load max/mean: uncached prefill tokens per replica."
            + "\n\n");
    for (String chart : charts) {
      sb.append("![").append(chart).append("](").append(chart).append(")\n\n");
    }
    return sb.toString();
  }

  /** With programs: their turns' TTFT, sessions' completion, the tokens a turn missed, warming. */
  private static void appendPrograms(StringBuilder sb, LabResults r) {
    if (r.policies().stream().allMatch(p -> p.programs() == null)) {
      return;
    }
    sb.append(
        "| policy | continuing TTFT p50 / p90 ms | session completion p50 / p90 s | missing tokens"
            + " per continuing turn mean / p90 | sessions | warmed tokens | warm-ups dropped |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (PolicyResult p : r.policies()) {
      ProgramResult g = p.programs();
      if (g == null) {
        continue;
      }
      sb.append(
          String.format(
              Locale.ROOT,
              "| %s | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f | %d | %d | %d |%n",
              p.policy(),
              g.continuingTtft().p50(),
              g.continuingTtft().p90(),
              g.sessionCompletion().p50() / 1000,
              g.sessionCompletion().p90() / 1000,
              g.missingTokens().mean(),
              g.missingTokens().p90(),
              g.sessions(),
              g.warmedTokens(),
              g.warmsDropped()));
    }
    sb.append('\n');
    appendFanOuts(sb, r);
    appendSessionTime(sb, r);
    for (PolicyResult p : r.policies()) {
      String without = p.policy().replace("+warm", "");
      if (p.programs() == null || without.equals(p.policy())) {
        continue;
      }
      r.policies().stream()
          .filter(q -> q.policy().equals(without) && q.programs() != null)
          .findFirst()
          .ifPresent(q -> sb.append(rises(p, q)));
    }
  }

  /** Where the top-level sessions' time went ({@link ProgramResult.SessionTime}). */
  private static void appendSessionTime(StringBuilder sb, LabResults r) {
    perPolicy(
        sb,
        r,
        "Where a session's time went, mean per session in seconds, over all sessions and over those"
            + " at or above the completion p90: its own turns' time to first token, after it, the"
            + " tool runs before them, and the rest (waiting for sub-agents).",
        "total | first token | decode | tool runs | sub-agents | slow: total | first token |"
            + " decode | tool runs | sub-agents",
        p -> {
          if (p.programs() == null) {
            return " |".repeat(9);
          }
          ProgramResult.SessionTime a = p.programs().sessionTime();
          ProgramResult.SessionTime b = p.programs().slowSessionTime();
          return String.format(
              Locale.ROOT,
              "%.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f",
              a.totalS(),
              a.firstTokenS(),
              a.decodeS(),
              a.toolS(),
              a.subAgentS(),
              b.totalS(),
              b.firstTokenS(),
              b.decodeS(),
              b.toolS(),
              b.subAgentS());
        });
  }

  /** Where sub-agent fan-outs landed ({@link ProgramResult.FanOuts}), when there were any. */
  private static void appendFanOuts(StringBuilder sb, LabResults r) {
    if (r.policies().stream()
        .noneMatch(p -> p.programs() != null && p.programs().fanOuts().count() > 0)) {
      return;
    }
    perPolicy(
        sb,
        r,
        "Sub-agent fan-outs: distinct replicas per fan-out, sub-agents on the parent's replica and"
            + " the tokens their first request missed, the parent's next turn on its replica and"
            + " the tokens it missed.",
        "fan-outs | sub-agents | replicas per fan-out | on parent | missed | join on parent |"
            + " join missed",
        p -> {
          ProgramResult.FanOuts f =
              p.programs() == null ? ProgramResult.FanOuts.NONE : p.programs().fanOuts();
          return String.format(
              Locale.ROOT,
              "%d | %d | %.2f | %.3f | %.0f | %.3f | %.0f",
              f.count(),
              f.subAgents(),
              f.replicasPerFanOut(),
              f.onParentShare(),
              f.subMissingMean(),
              f.joinOnParentShare(),
              f.joinMissingMean());
        });
  }

  /**
   * Per request, how the TTFT under {@code warm} differs from that under {@code without}: the
   * requests whose TTFT rose, and fell, by more than 10 and 100 ms, and the largest rise.
   */
  static String rises(PolicyResult warm, PolicyResult without) {
    double[] a = warm.programs().ttftByRequest();
    double[] b = without.programs().ttftByRequest();
    int up10 = 0;
    int up100 = 0;
    int down10 = 0;
    int down100 = 0;
    double largest = 0;
    for (int i = 0; i < a.length; i++) {
      double d = a[i] - b[i];
      up10 += d > 10 ? 1 : 0;
      up100 += d > 100 ? 1 : 0;
      down10 += d < -10 ? 1 : 0;
      down100 += d < -100 ? 1 : 0;
      largest = Math.max(largest, d);
    }
    return String.format(
        Locale.ROOT,
        "%s against %s, request by request: TTFT higher by more than 10 / 100 ms for %d / %d"
            + " requests, lower by as much for %d / %d; the largest rise %.1f ms.%n%n",
        warm.policy(),
        without.policy(),
        up10,
        up100,
        down10,
        down100,
        largest);
  }

  /** With a CPU tier: how much of each policy's hit rate was loaded back from it. */
  private static void appendCpuTier(StringBuilder sb, LabResults r) {
    LabConfig c = r.config();
    if (c.cpuBlocks() > 0) {
      perPolicy(
          sb,
          r,
          String.format(
              Locale.ROOT,
              "CPU tier: %d blocks per replica, %d µs to load a block back.",
              c.cpuBlocks(),
              c.cpuLoadMicrosPerBlock()),
          "hit_rate GPU | hit_rate CPU",
          p ->
              String.format(
                  Locale.ROOT, "%.4f | %.4f", p.hitRate() - p.cpuHitRate(), p.cpuHitRate()));
    }
  }

  /** With LoRA adapters: how often each policy made the engines load one. */
  private static void appendAdapters(StringBuilder sb, LabResults r) {
    LabConfig c = r.config();
    if (c.adapters() > 0) {
      perPolicy(
          sb,
          r,
          String.format(
              Locale.ROOT,
              "LoRA adapters: %d (Zipf %.2f), %d loaded per replica at most, %.0f ms to load one.",
              c.adapters(),
              c.adapterZipf(),
              c.adapterSlots(),
              c.adapterLoadMicros() / 1000.0),
          "adapter loads",
          p -> Long.toString(p.adapterLoads()));
    }
  }

  /** With follow-up requests: the measures SMG reports ({@link SessionMeasures}). */
  private static void appendSessions(StringBuilder sb, LabResults r) {
    if (r.policies().stream().anyMatch(p -> p.sessions() != null)) {
      perPolicy(
          sb,
          r,
          "Sessions: follow-ups cached (share of their prompt tokens), on their first turn's"
              + " replica, load CoV (requests per replica), one router's index (largest estimate).",
          "follow-ups | cached | same replica | load CoV | index MiB | index blocks | holdings",
          p -> sessionCells(p.sessions()));
    }
  }

  /** The cells of {@link #appendSessions}'s table for one policy. */
  static String sessionCells(SessionMeasures m) {
    return m == null
        ? "n/a | | | | | |"
        : String.format(
            Locale.ROOT,
            "%d | %.4f | %.4f | %.4f | %.1f | %d | %d",
            m.followUps(),
            m.followUpCached(),
            m.followUpSameReplica(),
            m.loadCov(),
            m.trackerBytes() / 1048576.0,
            m.trackerNodes(),
            m.trackerHoldings());
  }

  /** A title line and a table of one row per policy: its name, then {@code cells}. */
  private static void perPolicy(
      StringBuilder sb,
      LabResults r,
      String title,
      String header,
      java.util.function.Function<PolicyResult, String> cells) {
    sb.append(title).append("\n\n| policy | ").append(header).append(" |\n|---|");
    sb.append("---:|".repeat(header.split("\\|").length)).append('\n');
    for (PolicyResult p : r.policies()) {
      sb.append("| ").append(p.policy()).append(" | ").append(cells.apply(p)).append(" |\n");
    }
    sb.append('\n');
  }

  private static String chaos(LabConfig c) {
    StringBuilder s = new StringBuilder();
    if (c.killReplica() >= 0) {
      s.append(
          String.format(
              Locale.ROOT,
              ", replica r%d killed at %.1f s",
              c.killReplica(),
              c.killAtMicros() / 1e6));
    }
    if (c.dropEvents() > 0) {
      s.append(
          String.format(Locale.ROOT, ", %.0f%% of event batches dropped", c.dropEvents() * 100));
    }
    if (c.burst() > 0) {
      s.append(", burst of ").append(c.burst()).append(" requests at t=0");
    }
    return s.toString();
  }

  /** Writes the report. */
  public static void write(LabResults r, List<String> charts, Path file) throws IOException {
    Files.writeString(file, render(r, charts), StandardCharsets.UTF_8);
  }
}
