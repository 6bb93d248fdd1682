package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;

/**
 * Which LoRA adapter each request of a workload names, for the lab's adapter runs: {@code count}
 * adapters ({@code adapter-1} ... {@code adapter-N}) with Zipf popularity (adapter k drawn with
 * probability proportional to {@code 1 / k^s}), one per group of requests that belong together, so
 * that a conversation keeps its adapter from turn to turn, as an application keeps its fine-tune:
 * the request's session when the workload has one (multi-turn chat: the conversation; shared-prefix
 * workloads: the group), otherwise, for a trace, its second trace block id (a trace block id stands
 * for the block and every block before it, so requests whose prompts start with the same two blocks
 * share an adapter; the first block alone is shared by every prompt of the Mooncake conversation
 * trace). The draw is a seeded hash of the group, so every policy of a run sees the same adapters.
 *
 * <p>Cost: O(requests + count). Immutable result.
 */
final class LabAdapters {

  private LabAdapters() {}

  /** Per request, its adapter's name; all null when {@code count} is 0. */
  static String[] assign(Workload workload, int count, double zipf, long seed) {
    return names(draw(workload, count, zipf, seed), "adapter-");
  }

  /**
   * Per request, the identifier of the image it shows ({@code image-1} ... {@code image-N}, drawn
   * as the adapters are, per conversation, under another seed so that images and adapters are
   * independent; the identifier stands for a client's multimodal uuid, which the engine uses as it
   * is); all null when {@code count} is 0.
   */
  static String[] images(Workload workload, int count, double zipf, long seed) {
    return names(draw(workload, count, zipf, seed ^ 0x496D616765734C61L), "image-");
  }

  private static String[] names(int[] ranks, String prefix) {
    String[] out = new String[ranks.length];
    for (int i = 0; i < ranks.length; i++) {
      out[i] = ranks[i] == 0 ? null : prefix + ranks[i];
    }
    return out;
  }

  /** Per request, its group's Zipf draw in 1..count; all 0 when {@code count} is 0. */
  private static int[] draw(Workload workload, int count, double zipf, long seed) {
    int[] out = new int[workload.size()];
    if (count == 0) {
      return out;
    }
    double[] cdf = new double[count];
    double sum = 0;
    for (int k = 0; k < count; k++) {
      sum += 1 / Math.pow(k + 1, zipf);
      cdf[k] = sum;
    }
    for (int i = 0; i < out.length; i++) {
      double u = unit(mix(groupKey(workload.get(i)) ^ mix(seed))) * sum;
      int k = 0;
      while (k < count - 1 && cdf[k] < u) {
        k++;
      }
      out[i] = k + 1;
    }
    return out;
  }

  private static long groupKey(WorkloadRequest r) {
    if (!r.session().isEmpty()) {
      return r.session().hashCode() * 0x9E3779B97F4A7C15L;
    }
    long[] ids = r.traceBlockIds();
    if (ids != null && ids.length > 0) {
      return ids[Math.min(1, ids.length - 1)];
    }
    return r.index();
  }

  private static double unit(long z) {
    return (z >>> 11) * 0x1.0p-53;
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
