package io.kvrouter.loadtest.lab;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The {@code results.json} schema of issue 7: {@code workload}, {@code replicas}, {@code routers},
 * {@code capacity_blocks} (null when unlimited), {@code single_cache_hit_rate}, {@code
 * single_cache_block_hit_rate}, on finite capacity {@code pooled_lru_blocks} and {@code
 * pooled_lru_hit_rate} ({@link SingleCacheBound#pooledTokenRate}), and {@code policies}: objects
 * with {@code policy}, {@code hit_rate}, {@code block_hit_rate} (null without trace block ids),
 * {@code ttft_ms} {p50,p90,p99}, {@code e2e_ms} {p50,p99}, {@code throughput_rps}, {@code
 * load_max_over_mean}, {@code decisions}; with programs, {@code programs} ({@link
 * ProgramResult#write}: their measures and each request's TTFT); plus a few more fields that help
 * reading a run (settings, per-replica decisions). Stateless; O(policies × replicas).
 */
public final class ResultsJson {

  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private ResultsJson() {}

  /** The document as a tree. */
  public static ObjectNode toTree(LabResults r) {
    ObjectNode root = MAPPER.createObjectNode();
    LabConfig c = r.config();
    root.put("workload", r.workload());
    root.put("requests", r.requests());
    root.put("replicas", c.replicas());
    root.put("routers", c.routers());
    if (c.capacityBlocks() == 0) {
      root.putNull("capacity_blocks");
    } else {
      root.put("capacity_blocks", c.capacityBlocks());
    }
    root.put("block_size", c.blockSize());
    root.put("propagation_delay_ms", c.propagationDelayMicros() / 1000.0);
    root.put("seed", c.seed());
    root.put("single_cache_hit_rate", r.bound().tokenRate());
    root.put("single_cache_block_hit_rate", r.bound().blockRate());
    if (r.bound().pooledBlocks() > 0) {
      root.put("pooled_lru_blocks", r.bound().pooledBlocks());
      root.put("pooled_lru_hit_rate", r.bound().pooledTokenRate());
    }
    ObjectNode chaos = root.putObject("chaos");
    chaos.put("kill_replica", c.killReplica() < 0 ? null : "r" + c.killReplica());
    chaos.put("kill_at_s", c.killReplica() < 0 ? null : c.killAtMicros() / 1e6);
    chaos.put("drop_events", c.dropEvents());
    chaos.put("burst", c.burst());
    root.put("wall_ms", r.wallMillis());
    ArrayNode policies = root.putArray("policies");
    for (PolicyResult p : r.policies()) {
      ObjectNode o = policies.addObject();
      o.put("policy", p.policy());
      o.put("hit_rate", p.hitRate());
      if (r.config().cpuBlocks() > 0) {
        o.put("cpu_hit_rate", p.cpuHitRate());
      }
      if (r.config().adapters() > 0) {
        o.put("adapter_loads", p.adapterLoads());
      }
      if (p.blockHitRate() == null) {
        o.putNull("block_hit_rate");
      } else {
        o.put("block_hit_rate", p.blockHitRate());
      }
      ObjectNode ttft = o.putObject("ttft_ms");
      ttft.put("p50", p.ttft().p50());
      ttft.put("p90", p.ttft().p90());
      ttft.put("p99", p.ttft().p99());
      ttft.put("mean", p.ttft().mean());
      ObjectNode e2e = o.putObject("e2e_ms");
      e2e.put("p50", p.e2e().p50());
      e2e.put("p99", p.e2e().p99());
      o.put("throughput_rps", p.throughputRps());
      o.put("load_max_over_mean", p.loadMaxOverMean());
      o.put("decisions", p.decisions());
      o.put("completed", p.completed());
      ArrayNode per = o.putArray("decisions_per_replica");
      for (long d : p.perReplicaDecisions()) {
        per.add(d);
      }
      ArrayNode prefill = o.putArray("prefill_tokens_per_replica");
      for (long d : p.perReplicaPrefillTokens()) {
        prefill.add(d);
      }
      o.put("decisions_to_killed_after_kill", p.decisionsToKilledAfterKill());
      o.put("wall_ms", p.wallMillis());
      o.put("cpu_ms", p.cpuMillis());
      if (p.programs() != null) {
        p.programs().write(o.putObject("programs"));
      }
    }
    return root;
  }

  /** Writes the document. */
  public static void write(LabResults r, Path file) throws IOException {
    MAPPER.writeValue(file.toFile(), toTree(r));
  }
}
