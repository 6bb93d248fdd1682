package io.kvrouter.cli.dev;

import io.kvrouter.loadtest.lab.LabConfig;
import io.kvrouter.loadtest.lab.LabKills;
import io.kvrouter.loadtest.lab.LabPolicy;
import io.kvrouter.loadtest.lab.LabRepeats;
import io.kvrouter.loadtest.lab.LabReport;
import io.kvrouter.loadtest.lab.LabResults;
import io.kvrouter.loadtest.lab.PolicyLab;
import io.kvrouter.loadtest.lab.PolicyResult;
import io.kvrouter.loadtest.lab.RouterSweep;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kvrouter lab}: replays a workload in virtual time against simulated engines and routers,
 * once per routing policy, and writes results.json, report.md and charts (see {@link PolicyLab}).
 */
@Command(
    name = "lab",
    mixinStandardHelpOptions = true,
    description =
        "Replay a workload in virtual time against simulated engines, for every routing policy side by side.")
final class LabCommand implements Callable<Integer> {

  static final class Source {
    @Option(
        names = "--trace",
        paramLabel = "FILE",
        description =
            "A Mooncake-format trace (JSON lines with timestamp, input_length, output_length, hash_ids).")
    Path trace;

    @Option(
        names = "--workload",
        paramLabel = "NAME",
        description =
            "A named workload: mooncake-conversation, mooncake-synthetic (traces bundled in the jar), sglang-gsp, llmd-b2b, multi-turn-chat, agents (coding-agent programs, replayed closed-loop).")
    String workload;
  }

  @Spec CommandSpec spec;

  @ArgGroup(exclusive = true, multiplicity = "1")
  Source source;

  @Option(
      names = "--workload-param",
      paramLabel = "KEY=VALUE",
      description = "A parameter of the named workload (repeatable), e.g. groups=16.")
  Map<String, String> workloadParams = new LinkedHashMap<>();

  @Option(names = "--limit", paramLabel = "N", description = "Replay only the first N requests.")
  Integer limit;

  @Option(
      names = "--speed-up",
      paramLabel = "F",
      defaultValue = "1",
      description = "Divide arrival times by F (default: ${DEFAULT-VALUE}).")
  double speedUp;

  @Option(
      names = "--replicas",
      defaultValue = "8",
      description = "Simulated engines (default: ${DEFAULT-VALUE}).")
  int replicas;

  @Option(
      names = "--routers",
      defaultValue = "1",
      split = ",",
      paramLabel = "K[,K...]",
      description =
          "Routers (ingresses); arrivals are spread over them round robin (default:"
              + " ${DEFAULT-VALUE}). Several (1,2,4,8,16) run a sweep: one report, a table and"
              + " charts of p90 TTFT and hit rate against K.")
  List<Integer> routers;

  @Option(
      names = "--arrivals",
      defaultValue = "recorded",
      paramLabel = "recorded|spread|both",
      description =
          "Arrivals as recorded, or spread uniformly (seeded by --seed) over their tick (a trace"
              + " whose timestamps come in coarse ticks replays each tick as a burst), or both"
              + " (default: ${DEFAULT-VALUE}).")
  String arrivals;

  @Option(
      names = "--capacity-blocks",
      paramLabel = "N",
      description =
          "KV capacity per engine in blocks of --block-size tokens (unlimited when absent).")
  Long capacityBlocks;

  @Option(
      names = "--policies",
      split = ",",
      paramLabel = "a,b,...",
      description =
          "Policies to compare (all when absent): kvrouter, round_robin, random, least_loaded,"
              + " chwbl, sglang_cache_aware, tgi_trie, dynamo_kv, llmd_precise, preble_e2,"
              + " vllm_router_kv; variants on request: dynamo_kv_w2 (Dynamo with overlap weight"
              + " 2), dynamo_kv_decode (overlap weight 0, Dynamo's decode router), dynamo_kv_sync"
              + " (Dynamo's routers sharing their active sequences, router_replica_sync),"
              + " sglang_mesh (SMG's gateways gossiping their trees, --enable-mesh), earlier"
              + " releases dynamo_kv_v1_1, llmd_precise_v0_8_0, sglang_cache_aware_v1_9_0,"
              + " kvrouter@KEY=VALUE[@KEY=VALUE...] (kvrouter with settings of"
              + " kvrouter.tracker.policy changed, e.g. kvrouter@cost.work-weight=1.5). NAME/strict"
              + " runs a policy in strict mode (each decision admitted by the replica's gate, one"
              + " propagation delay away). NAME+warm, NAME+las, NAME+warm+las run it with the"
              + " program features on a workload of programs (agents): +warm prefills a program's"
              + " next turn on its replica with headroom, +las queues continuing programs first.")
  List<String> policies;

  @Option(
      names = "--propagation-delay-ms",
      defaultValue = "0",
      description =
          "How late routers see engine events and each other's reservations (default: ${DEFAULT-VALUE}).")
  double propagationDelayMs;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description =
          "Seed of the policies' random choices, generated workloads and chaos (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--block-size",
      defaultValue = "16",
      description = "Tokens per KV block, engines and routers alike (default: ${DEFAULT-VALUE}).")
  int blockSize;

  @Option(
      names = "--cpu-blocks",
      defaultValue = "0",
      paramLabel = "N",
      description =
          "Blocks of each engine's CPU offload tier (vLLM's offloading connector: every computed"
              + " block also stored to host memory, LRU, loaded back on a hit); 0 for none"
              + " (default: ${DEFAULT-VALUE}).")
  long cpuBlocks;

  @Option(
      names = "--cpu-load-micros",
      paramLabel = "US",
      description =
          "Microseconds to load one block back from the CPU tier (default: 128 KiB of KV per"
              + " token over PCIe 4.0 x16's 31.5 GB/s, 67 us for 16-token blocks).")
  Long cpuLoadMicros;

  @Option(
      names = "--adapters",
      defaultValue = "0",
      paramLabel = "N",
      description =
          "LoRA adapters the requests name, one per conversation (session, or a trace's first two"
              + " blocks), Zipf popularity; 0 for none (default: ${DEFAULT-VALUE}).")
  int adapters;

  @Option(
      names = "--adapter-zipf",
      defaultValue = "1.0",
      paramLabel = "S",
      description = "Zipf exponent of the adapters' popularity (default: ${DEFAULT-VALUE}).")
  double adapterZipf;

  @Option(
      names = "--adapter-slots",
      defaultValue = "4",
      paramLabel = "N",
      description =
          "Adapters an engine holds loaded at once, least recently used evicted (default:"
              + " ${DEFAULT-VALUE}).")
  int adapterSlots;

  @Option(
      names = "--adapter-load-ms",
      defaultValue = "86",
      paramLabel = "MS",
      description =
          "Time to load an adapter an engine does not hold (default: ${DEFAULT-VALUE}, the"
              + " mocker's prefill time of the 4,096 tokens the ingress's load penalty stands for).")
  double adapterLoadMs;

  @Option(
      names = "--images",
      defaultValue = "0",
      paramLabel = "N",
      description =
          "Images the requests show, one per conversation (session, or a trace's first two blocks),"
              + " Zipf popularity, placed after the trace's first block and keyed into the blocks"
              + " as the engine does; needs a trace workload; 0 for none (default:"
              + " ${DEFAULT-VALUE}).")
  int images;

  @Option(
      names = "--image-zipf",
      defaultValue = "1.0",
      paramLabel = "S",
      description = "Zipf exponent of the images' popularity (default: ${DEFAULT-VALUE}).")
  double imageZipf;

  @Option(
      names = "--image-tokens",
      defaultValue = "256",
      paramLabel = "T",
      description =
          "Placeholder tokens per image, a multiple of the block size (default: ${DEFAULT-VALUE},"
              + " the ingress's kvrouter.models.<m>.images.tokens default).")
  int imageTokens;

  @Option(
      names = "--max-num-seqs",
      defaultValue = "256",
      description = "Engine max_num_seqs (default: ${DEFAULT-VALUE}).")
  int maxNumSeqs;

  @Option(
      names = "--max-num-batched-tokens",
      defaultValue = "8192",
      description = "Engine max_num_batched_tokens (default: ${DEFAULT-VALUE}).")
  int maxBatchedTokens;

  @Option(
      names = "--kill-replica",
      paramLabel = "ID@SECONDS",
      description =
          "Kill a replica mid-run, e.g. r3@600: removed from every router, its live requests retried elsewhere.")
  String killReplica;

  @Option(
      names = "--kill-migration",
      split = ",",
      paramLabel = "SECONDS",
      description =
          "With --kill-replica: replay the first policy twice more per time given, the replica"
              + " killed then, the requests it cut mid-answer retried by their clients, then"
              + " migrated (prompt and generated tokens sent on), and print what each cost.")
  List<Double> killMigration;

  @Option(
      names = "--drop-events",
      paramLabel = "FRACTION",
      defaultValue = "0",
      description =
          "Fraction of KV-event batches lost on the way to each router (default: ${DEFAULT-VALUE}).")
  double dropEvents;

  @Option(
      names = "--burst",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "The first N requests all arrive at time 0, spread over the routers (default: ${DEFAULT-VALUE}).")
  int burst;

  @Option(
      names = "--jitter-ms",
      paramLabel = "MS",
      defaultValue = "0",
      description =
          "Delay each arrival by a uniform draw below MS milliseconds (seeded by --seed): replays"
              + " of the same trace under a few draws show how far one replay's figures hold"
              + " (default: ${DEFAULT-VALUE}).")
  double jitterMs;

  @Option(
      names = "--repeats",
      paramLabel = "N",
      defaultValue = "1",
      description =
          "Run the lab N times, with seeds --seed to --seed+N-1 (each drawing its own generated"
              + " workload, spread, jitter and policy randomness), and report each policy's mean,"
              + " spread and range of p90 TTFT and hit rate, and in how many runs it led"
              + " (default: ${DEFAULT-VALUE}).")
  int repeats;

  @Option(
      names = "--threads",
      defaultValue = "2",
      description = "Policies simulated at once (default: ${DEFAULT-VALUE}).")
  int threads;

  @Option(
      names = "--out",
      paramLabel = "DIR",
      description = "Write results.json, report.md and PNG charts here.")
  Path out;

  /** The disaggregated lab's options ({@code --prefill}, {@code --decode}, {@code --dp-size}). */
  @CommandLine.ArgGroup(exclusive = false)
  PdLabOptions pd;

  @Override
  public Integer call() throws Exception {
    System.setProperty("java.awt.headless", "true");
    if (!(jitterMs >= 0) || Double.isInfinite(jitterMs)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--jitter-ms must be >= 0 and finite, got " + jitterMs);
    }
    if (repeats < 1) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--repeats must be >= 1, got " + repeats);
    }
    int kill = -1;
    long killAt = 0;
    if (killReplica != null) {
      String[] parts = killReplica.split("@");
      if (parts.length != 2) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--kill-replica wants ID@SECONDS, e.g. r3@600, got " + killReplica);
      }
      kill = Integer.parseInt(parts[0].startsWith("r") ? parts[0].substring(1) : parts[0]);
      killAt = Math.round(Double.parseDouble(parts[1]) * 1e6);
    }
    if (!List.of("recorded", "spread", "both").contains(arrivals)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--arrivals wants recorded, spread or both, got " + arrivals);
    }
    if (routers.isEmpty() || routers.stream().anyMatch(k -> k < 1)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--routers must be >= 1");
    }
    LabConfig config;
    try {
      config =
          new LabConfig(
              replicas,
              routers.get(0),
              capacityBlocks == null ? 0 : capacityBlocks,
              policies == null ? LabPolicy.defaults() : policies,
              Math.round(propagationDelayMs * 1000),
              seed,
              blockSize,
              maxNumSeqs,
              maxBatchedTokens,
              kill,
              killAt,
              dropEvents,
              burst,
              250_000,
              cpuBlocks,
              cpuLoadMicros == null ? LabConfig.defaultCpuLoadMicros(blockSize) : cpuLoadMicros,
              adapters,
              adapterZipf,
              adapterSlots,
              Math.round(adapterLoadMs * 1000),
              images,
              imageZipf,
              imageTokens);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    // originalArgs() holds the whole command line, the subcommand name included.
    String command =
        "kvrouter " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
    boolean sweep = routers.size() > 1 || arrivals.equals("both");
    if (repeats > 1 && (pd != null || sweep)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--repeats applies to one lab: not with --prefill/--decode, several --routers or"
              + " --arrivals both");
    }
    if (jitterMs > 0 && sweep && !arrivals.equals("recorded")) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--jitter-ms in a router sweep wants --arrivals recorded: the sweep spreads over ticks"
              + " that a jitter would already have blurred");
    }
    if (killMigration != null && (kill < 0 || repeats > 1 || pd != null || sweep)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--kill-migration applies to one lab with --kill-replica: not with --repeats,"
              + " --prefill/--decode, several --routers or --arrivals both");
    }
    if (repeats > 1) {
      return repeated(config, command);
    }
    // Built here, not before: a repeated lab draws each run's workload itself.
    Workload workload = workload(seed);
    if (pd != null) {
      return pd.run(workload, config, threads, command, out);
    }
    if (sweep) {
      return sweep(workload, config, command);
    }
    LabResults results = PolicyLab.run(workload, config, threads, command);
    System.out.print(LabReport.render(results, List.of()));
    for (PolicyResult p : results.policies()) {
      System.out.printf(
          Locale.ROOT,
          "  %-20s simulated in %5.1f s wall, %5.1f s CPU%n",
          p.policy(),
          p.wallMillis() / 1000.0,
          p.cpuMillis() / 1000.0);
    }
    System.out.printf(
        Locale.ROOT, "wall time of the whole run: %.1f s%n", results.wallMillis() / 1000.0);
    if (out != null) {
      PolicyLab.write(results, out);
      System.out.println("wrote " + out.resolve("results.json") + ", report.md and charts");
    }
    if (killMigration != null) {
      String policy = config.policies().get(0);
      long[] at = killMigration.stream().mapToLong(t -> Math.round(t * 1e6)).toArray();
      System.out.printf(
          "%nRequests the kill of r%d cut mid-answer (%s; kills at %s s):%n%n",
          kill, policy, killMigration);
      System.out.print(LabKills.markdown(LabKills.compare(workload, config, policy, at)));
    }
    return 0;
  }

  /**
   * The workload drawn from seed {@code s}: generated (a named workload's own seed) or read, sped
   * up, cut to --limit, under --arrivals spread spread over its ticks, and its arrivals jittered by
   * up to --jitter-ms (after the spread: a jitter first would leave no ticks to spread over).
   */
  private Workload workload(long s) {
    Workload w =
        source.trace != null
            ? Workloads.fromTrace(source.trace, 0L)
            : Workloads.byName(source.workload, workloadParams, s);
    if (speedUp != 1.0) {
      w = w.speedUp(speedUp);
    }
    if (limit != null) {
      w = w.limit(limit);
    }
    if (arrivals.equals("spread") && pd == null && routers.size() == 1) {
      w = w.spreadOverTicks(s);
    }
    return w.jitter(s, Math.round(jitterMs * 1000));
  }

  private int repeated(LabConfig config, String command) throws Exception {
    List<LabRepeats.Run> runs = LabRepeats.run(this::workload, config, repeats, threads, command);
    System.out.print(LabRepeats.render(runs, command));
    if (out != null) {
      LabRepeats.write(runs, command, out);
      System.out.println("wrote " + out.resolve("repeats.md") + " and each run's results.json");
    }
    return 0;
  }

  private int sweep(Workload workload, LabConfig config, String command) throws Exception {
    List<RouterSweep.Point> points =
        RouterSweep.run(
            workload,
            config,
            routers,
            !arrivals.equals("spread"),
            !arrivals.equals("recorded"),
            seed,
            threads,
            command);
    System.out.print(RouterSweep.render(points, command));
    if (out != null) {
      RouterSweep.write(points, command, out);
      System.out.println("wrote " + out.resolve("sweep.md") + " and charts");
    }
    return 0;
  }
}
