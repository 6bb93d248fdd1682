package io.kvrouter.loadtest.lab;

import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Settings of one lab run (every policy in it shares them).
 *
 * @param replicas simulated engines, at least 1
 * @param routers routers (ingresses), at least 1; arrivals are assigned to them round robin
 * @param capacityBlocks KV capacity per engine in blocks of {@code blockSize} tokens; 0 for
 *     unlimited (then {@link #UNLIMITED_BLOCKS})
 * @param policies policy names to compare (see {@link Policies#names()} and {@link
 *     Policies#variants()}), each possibly run in strict mode ({@link LabPolicy})
 * @param propagationDelayMicros how late routers see engine events and each other's reservation
 *     events; 0 delivers them at once
 * @param seed seeds every policy's random generator and the chaos options
 * @param blockSize tokens per KV block, for engines and routers alike (both 16 by default: the
 *     router's default; the mocker's 64 would make the router's keys coarser than vLLM's)
 * @param maxNumSeqs engine {@code max_num_seqs} (256)
 * @param maxBatchedTokens engine {@code max_num_batched_tokens} (8,192)
 * @param killReplica replica index killed mid-run, or -1
 * @param killAtMicros when it is killed (virtual time)
 * @param dropEvents fraction of KV-event batches lost on the way to each router (0 to 1)
 * @param burst the first {@code burst} requests all arrive at time 0 (herding), 0 for none
 * @param loadReportMicros interval of engine load reports to routers (and of lease expiry)
 * @param cpuBlocks blocks of each engine's CPU offload tier ({@link LabCpuTier}), 0 for none (vLLM
 *     without an offloading connector)
 * @param cpuLoadMicrosPerBlock time to load one block back from the CPU tier, added to the pass
 *     that loads it (default {@link #defaultCpuLoadMicros})
 * @param adapters LoRA adapters the requests name ({@link LabAdapters}), 0 for none
 * @param adapterZipf Zipf exponent of the adapters' popularity
 * @param adapterSlots adapters an engine holds loaded at once, least recently used evicted (0:
 *     unbounded)
 * @param adapterLoadMicros time to load an adapter an engine does not hold, added to the pass that
 *     admits the request (default {@link #DEFAULT_ADAPTER_LOAD_MICROS})
 * @param images images the requests show ({@link LabAdapters#images}, keyed by {@link PromptKeys}),
 *     0 for none
 * @param imageZipf Zipf exponent of the images' popularity
 * @param imageTokens placeholder tokens per image (default {@link #DEFAULT_IMAGE_TOKENS})
 */
public record LabConfig(
    int replicas,
    int routers,
    long capacityBlocks,
    List<String> policies,
    long propagationDelayMicros,
    long seed,
    int blockSize,
    int maxNumSeqs,
    int maxBatchedTokens,
    int killReplica,
    long killAtMicros,
    double dropEvents,
    int burst,
    long loadReportMicros,
    long cpuBlocks,
    long cpuLoadMicrosPerBlock,
    int adapters,
    double adapterZipf,
    int adapterSlots,
    long adapterLoadMicros,
    int images,
    double imageZipf,
    int imageTokens) {

  /**
   * Default placeholder tokens per image: 256, the ingress's {@code
   * kvrouter.models.<m>.images.tokens} default ({@code MediaPrompt.Settings.DEFAULTS}).
   */
  public static final int DEFAULT_IMAGE_TOKENS = 256;

  /**
   * Default time to load a LoRA adapter: 86 ms, what the mocker's pass-time model takes to prefill
   * 4,096 tokens (16.5 + 62.2 + 7.1 ms), i.e. the work the ingress's {@code
   * kvrouter.lora.load-penalty-tokens} (4,096) stands for ("vLLM loads a LoRA adapter from disk in
   * a fraction of a second"): the project's assumption, not a measurement, kept equal on both sides
   * so the router's penalty and the engine's cost agree.
   */
  public static final long DEFAULT_ADAPTER_LOAD_MICROS = 86_000;

  /** Capacity an "unlimited" engine gets: more blocks than any workload here can fill. */
  public static final long UNLIMITED_BLOCKS = 1L << 40;

  /** The model name the engines serve and the keys are seeded with. */
  public static final String MODEL = "lab-model";

  /**
   * KV bytes per token: Llama-3.1-8B's (2 tensors × 32 layers × 8 KV heads × 128 dimensions × 2
   * bytes, from its {@code config.json}), as the sim's {@code SimKvTransfer} takes it.
   */
  public static final long KV_BYTES_PER_TOKEN = 131_072;

  /**
   * Host-to-GPU bandwidth: PCIe 4.0 x16 per direction, 16 GT/s × 16 lanes × 128/130 encoding ÷ 8 =
   * 31.5 GB/s (the PCI-SIG base specification's signalling rate; a real copy gets somewhat less, so
   * the load time below is a lower bound).
   */
  public static final double PCIE_BYTES_PER_SECOND = 31.5e9;

  /**
   * Time to load one block of {@code blockSize} tokens from host memory: {@link
   * #KV_BYTES_PER_TOKEN} × blockSize ÷ {@link #PCIE_BYTES_PER_SECOND}; 67 µs for 16-token blocks,
   * about a quarter of what computing them costs in the mocker's model (16 × 15.2 µs = 243 µs
   * linear term), so a CPU hit saves about three quarters of a GPU hit, near Dynamo's host-tier
   * credit 0.75.
   */
  public static long defaultCpuLoadMicros(int blockSize) {
    return Math.round(KV_BYTES_PER_TOKEN * (double) blockSize / PCIE_BYTES_PER_SECOND * 1e6);
  }

  public LabConfig {
    Objects.requireNonNull(policies, "policies");
    policies = List.copyOf(policies);
    if (replicas < 1 || routers < 1) {
      throw new IllegalArgumentException("need at least one replica and one router");
    }
    if (adapters < 0 || !(adapterZipf >= 0) || adapterSlots < 0 || adapterLoadMicros < 0) {
      throw new IllegalArgumentException(
          "adapters, adapter Zipf exponent, slots and load time must be >= 0");
    }
    if (images < 0 || !(imageZipf >= 0) || imageTokens <= 0) {
      throw new IllegalArgumentException(
          "images and image Zipf exponent must be >= 0, image tokens > 0");
    }
    if (cpuBlocks < 0 || cpuLoadMicrosPerBlock < 0) {
      throw new IllegalArgumentException("cpu blocks and cpu load time must be >= 0");
    }
    if (capacityBlocks < 0 || propagationDelayMicros < 0 || burst < 0 || blockSize < 1) {
      throw new IllegalArgumentException("capacity, delay, burst must be >= 0, block size >= 1");
    }
    if (!(dropEvents >= 0 && dropEvents <= 1)) {
      throw new IllegalArgumentException("drop-events must be within [0, 1], was " + dropEvents);
    }
    if (killReplica >= replicas) {
      throw new IllegalArgumentException(
          "kill-replica " + killReplica + " >= replicas " + replicas);
    }
    for (String p : policies) {
      LabPolicy.parse(p);
    }
    if (policies.isEmpty()) {
      throw new IllegalArgumentException("no policy to run");
    }
  }

  /** One router, unlimited capacity, every policy, no delay, no chaos, seed 1. */
  public static LabConfig defaults(int replicas) {
    return new LabConfig(
        replicas,
        1,
        0,
        LabPolicy.defaults(),
        0,
        1,
        16,
        256,
        8192,
        -1,
        0,
        0,
        0,
        250_000,
        0,
        defaultCpuLoadMicros(16),
        0,
        1.0,
        0,
        DEFAULT_ADAPTER_LOAD_MICROS,
        0,
        1.0,
        DEFAULT_IMAGE_TOKENS);
  }

  /** Engine capacity in blocks, resolving "unlimited". */
  public long effectiveCapacity() {
    return capacityBlocks == 0 ? UNLIMITED_BLOCKS : capacityBlocks;
  }

  public LabConfig withPolicies(List<String> p) {
    return with(b -> b.policies = p);
  }

  public LabConfig withRouters(int k, long delayMicros) {
    return with(
        b -> {
          b.routers = k;
          b.propagationDelayMicros = delayMicros;
        });
  }

  public LabConfig withCapacity(long blocks) {
    return with(b -> b.capacityBlocks = blocks);
  }

  public LabConfig withSeed(long s) {
    return with(b -> b.seed = s);
  }

  public LabConfig withChaos(int kill, long killAt, double drop, int burstCount) {
    return with(
        b -> {
          b.killReplica = kill;
          b.killAtMicros = killAt;
          b.dropEvents = drop;
          b.burst = burstCount;
        });
  }

  public LabConfig withBlockSize(int bs) {
    return with(b -> b.blockSize = bs);
  }

  /** Engines with a CPU offload tier of {@code blocks} blocks loading one in {@code loadMicros}. */
  public LabConfig withCpuTier(long blocks, long loadMicros) {
    return with(
        b -> {
          b.cpuBlocks = blocks;
          b.cpuLoadMicrosPerBlock = loadMicros;
        });
  }

  /**
   * Requests naming {@code count} LoRA adapters of Zipf popularity {@code zipf}, engines holding
   * {@code slots} at once and loading one in {@code loadMicros}.
   */
  public LabConfig withAdapters(int count, double zipf, int slots, long loadMicros) {
    return with(
        b -> {
          b.adapters = count;
          b.adapterZipf = zipf;
          b.adapterSlots = slots;
          b.adapterLoadMicros = loadMicros;
        });
  }

  /**
   * Requests showing one of {@code count} images of Zipf popularity {@code zipf}, {@code tokens}
   * placeholder tokens each.
   */
  public LabConfig withImages(int count, double zipf, int tokens) {
    return with(
        b -> {
          b.images = count;
          b.imageZipf = zipf;
          b.imageTokens = tokens;
        });
  }

  /** Returns a copy with {@code change} applied to the builder of its components. */
  private LabConfig with(Consumer<Builder> change) {
    Builder b = new Builder(this);
    change.accept(b);
    return b.build();
  }

  /** The components of a {@link LabConfig} to change one or a few, as the withers do. */
  private static final class Builder {
    private int replicas;
    private int routers;
    private long capacityBlocks;
    private List<String> policies;
    private long propagationDelayMicros;
    private long seed;
    private int blockSize;
    private int maxNumSeqs;
    private int maxBatchedTokens;
    private int killReplica;
    private long killAtMicros;
    private double dropEvents;
    private int burst;
    private long loadReportMicros;
    private long cpuBlocks;
    private long cpuLoadMicrosPerBlock;
    private int adapters;
    private double adapterZipf;
    private int adapterSlots;
    private long adapterLoadMicros;
    private int images;
    private double imageZipf;
    private int imageTokens;

    private Builder(LabConfig c) {
      replicas = c.replicas;
      routers = c.routers;
      capacityBlocks = c.capacityBlocks;
      policies = c.policies;
      propagationDelayMicros = c.propagationDelayMicros;
      seed = c.seed;
      blockSize = c.blockSize;
      maxNumSeqs = c.maxNumSeqs;
      maxBatchedTokens = c.maxBatchedTokens;
      killReplica = c.killReplica;
      killAtMicros = c.killAtMicros;
      dropEvents = c.dropEvents;
      burst = c.burst;
      loadReportMicros = c.loadReportMicros;
      cpuBlocks = c.cpuBlocks;
      cpuLoadMicrosPerBlock = c.cpuLoadMicrosPerBlock;
      adapters = c.adapters;
      adapterZipf = c.adapterZipf;
      adapterSlots = c.adapterSlots;
      adapterLoadMicros = c.adapterLoadMicros;
      images = c.images;
      imageZipf = c.imageZipf;
      imageTokens = c.imageTokens;
    }

    private LabConfig build() {
      return new LabConfig(
          replicas,
          routers,
          capacityBlocks,
          policies,
          propagationDelayMicros,
          seed,
          blockSize,
          maxNumSeqs,
          maxBatchedTokens,
          killReplica,
          killAtMicros,
          dropEvents,
          burst,
          loadReportMicros,
          cpuBlocks,
          cpuLoadMicrosPerBlock,
          adapters,
          adapterZipf,
          adapterSlots,
          adapterLoadMicros,
          images,
          imageZipf,
          imageTokens);
    }
  }
}
