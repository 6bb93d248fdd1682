package io.kvrouter.cli.dev;

import io.kvrouter.loadtest.lab.LabConfig;
import io.kvrouter.loadtest.lab.PdLab;
import io.kvrouter.loadtest.lab.PdLabSimulation;
import io.kvrouter.loadtest.lab.PdScheme;
import io.kvrouter.loadtest.workload.Workload;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code kvrouter lab --prefill N --decode M [--dp-size K]}: the lab on a disaggregated cluster,
 * comparing kvrouter's prefill/decode routing with Dynamo's, llm-d's and vLLM's proxy's ({@link
 * PdScheme}). The engine shape, seed and workload options are the lab's own.
 */
final class PdLabOptions {

  @Option(
      names = "--prefill",
      required = true,
      description = "Prefill engines: run the disaggregated lab.")
  int prefill;

  @Option(names = "--decode", required = true, description = "Decode engines.")
  int decode;

  @Option(
      names = "--dp-size",
      defaultValue = "1",
      description = "Data-parallel ranks per engine (default: ${DEFAULT-VALUE}).")
  int dpSize;

  @Option(
      names = "--pd-schemes",
      split = ",",
      description =
          "Schemes to compare (default: all of kvrouter_pd, dynamo_pd, llmd_pd, vllm_proxy_pd).")
  List<String> schemes;

  @Option(
      names = "--kv-bytes-per-token",
      defaultValue = "131072",
      description = "KV bytes per token moved from prefill to decode (default: ${DEFAULT-VALUE}).")
  long kvBytesPerToken;

  @Option(
      names = "--transfer-bytes-per-second",
      defaultValue = "25e9",
      description = "Prefill-to-decode transfer bandwidth (default: ${DEFAULT-VALUE}).")
  double transferBytesPerSecond;

  int run(Workload workload, LabConfig lab, int threads, String command, Path out)
      throws Exception {
    PdLabSimulation.Cluster cluster =
        new PdLabSimulation.Cluster(
            prefill, decode, dpSize, kvBytesPerToken, transferBytesPerSecond);
    List<PdScheme> chosen =
        schemes == null ? PdScheme.all() : schemes.stream().map(PdScheme::named).toList();
    long start = System.nanoTime();
    List<PdLabSimulation.Result> results = PdLab.run(workload, lab, cluster, chosen, threads);
    String md = PdLab.markdown(workload.name(), cluster, results, command);
    System.out.print(md);
    System.out.printf(
        java.util.Locale.ROOT, "wall time: %.1f s%n", (System.nanoTime() - start) / 1e9);
    if (out != null) {
      PdLab.write(out, md);
      System.out.println("wrote " + out.resolve("report.md"));
    }
    return 0;
  }
}
