package io.kvrouter.loadtest.workload;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * An ordered, immutable list of {@link WorkloadRequest}s: the input of the policy lab and of the
 * HTTP load generator.
 *
 * <p>Contract: requests are sorted by arrival time (ties keep the order the source produced them,
 * e.g. trace line order) and {@code get(i).index() == i}. {@link #blockTokens()} is the token size
 * of one trace block id (512 for Mooncake traces) or 0 when the requests carry no trace block ids.
 *
 * <p>Cost: the list plus, per request, its segment arrays and trace ids (the Mooncake conversation
 * trace, 12,031 requests and 288,500 blocks, takes about 6 MB); token ids are never held here.
 */
public final class Workload {

  private final String name;
  private final long seed;
  private final int blockTokens;
  private final List<WorkloadRequest> requests;
  private final int firstUserSegment;

  /** The requests' programs, or null when the workload names none ({@link #withPrograms}). */
  private final Programs programs;

  private Workload(String name, long seed, int blockTokens, List<WorkloadRequest> requests) {
    this(name, seed, blockTokens, requests, -1, null);
  }

  private Workload(
      String name,
      long seed,
      int blockTokens,
      List<WorkloadRequest> requests,
      int firstUserSegment,
      Programs programs) {
    this.name = name;
    this.seed = seed;
    this.blockTokens = blockTokens;
    this.requests = requests;
    this.firstUserSegment = firstUserSegment;
    this.programs = programs;
  }

  /**
   * The same requests, grouped into programs by {@code programs} (agent sessions: which requests
   * wait for which replies, which replies end in a tool call).
   */
  public Workload withPrograms(Programs programs) {
    return new Workload(name, seed, blockTokens, requests, firstUserSegment, programs);
  }

  /** The requests' programs, or null when the workload names none. */
  public Programs programs() {
    return programs;
  }

  /**
   * The same requests, sent as chat messages whose first user message is prompt segment {@code
   * segment} of every request ({@link PromptTokens#segmentLength}): what a router that reads
   * messages, not tokens, keys on (KubeAI).
   */
  public Workload withFirstUserSegment(int segment) {
    if (segment < 0) {
      throw new IllegalArgumentException("segment must be >= 0, got " + segment);
    }
    return new Workload(name, seed, blockTokens, requests, segment, programs);
  }

  /**
   * The prompt segment that is each request's first user message, or -1 when the requests carry no
   * message boundaries (a token trace, or a prompt sent as one text).
   */
  public int firstUserSegment() {
    return firstUserSegment;
  }

  /**
   * Builds a workload from requests in any order: sorts them stably by arrival and renumbers them.
   *
   * @param blockTokens tokens per trace block id, or 0 if the requests carry none
   */
  public static Workload of(
      String name, long seed, int blockTokens, List<WorkloadRequest> unordered) {
    if (blockTokens < 0) {
      throw new IllegalArgumentException("blockTokens must be >= 0, got " + blockTokens);
    }
    List<WorkloadRequest> sorted = new ArrayList<>(unordered);
    sorted.sort(Comparator.comparingLong(WorkloadRequest::arrivalMicros)); // List.sort is stable
    List<WorkloadRequest> numbered = new ArrayList<>(sorted.size());
    for (int i = 0; i < sorted.size(); i++) {
      WorkloadRequest r = sorted.get(i);
      numbered.add(r.index() == i ? r : r.withIndexAndArrival(i, r.arrivalMicros()));
    }
    return new Workload(name, seed, blockTokens, List.copyOf(numbered));
  }

  /** Workload name, e.g. {@code mooncake-conversation}. */
  public String name() {
    return name;
  }

  /** Seed the prompts (and, for generators, the arrivals) were derived from. */
  public long seed() {
    return seed;
  }

  /** Tokens per trace block id (512 for Mooncake), 0 if requests carry no trace block ids. */
  public int blockTokens() {
    return blockTokens;
  }

  /** Number of requests. */
  public int size() {
    return requests.size();
  }

  /** Request {@code i} in arrival order. */
  public WorkloadRequest get(int i) {
    return requests.get(i);
  }

  /** All requests in arrival order (unmodifiable). */
  public List<WorkloadRequest> requests() {
    return requests;
  }

  /** The requests as a stream, in arrival order. */
  public Stream<WorkloadRequest> stream() {
    return requests.stream();
  }

  /** Sum of prompt lengths. O(n). */
  public long totalPromptTokens() {
    long sum = 0;
    for (WorkloadRequest r : requests) {
      sum += r.inputLength();
    }
    return sum;
  }

  /** Arrival time of the last request in microseconds (0 if empty). */
  public long durationMicros() {
    return requests.isEmpty() ? 0 : requests.get(requests.size() - 1).arrivalMicros();
  }

  /**
   * The same requests replayed {@code factor} times faster (arrival times divided by {@code
   * factor}, rounded down); a factor of 2 replays a one-hour trace in 30 minutes.
   */
  public Workload speedUp(double factor) {
    if (!(factor > 0) || Double.isInfinite(factor)) {
      throw new IllegalArgumentException(
          "speed-up factor must be positive and finite, got " + factor);
    }
    List<WorkloadRequest> out = new ArrayList<>(requests.size());
    for (WorkloadRequest r : requests) {
      out.add(r.withIndexAndArrival(r.index(), (long) (r.arrivalMicros() / factor)));
    }
    return new Workload(name, seed, blockTokens, List.copyOf(out), firstUserSegment, programs);
  }

  /**
   * The same requests with quantised arrivals spread over their tick: a trace that records time in
   * coarse ticks (the Mooncake conversation trace: about 3 s) makes every request of a tick arrive
   * at the same instant, a burst. Here each request moves to a uniformly drawn point between its
   * timestamp and the next distinct timestamp of the workload (the last tick takes the median gap
   * between ticks), drawn from {@code spreadSeed}; the result is sorted and renumbered as {@link
   * #of} does. O(n log n).
   */
  public Workload spreadOverTicks(long spreadSeed) {
    List<Long> ticks = new ArrayList<>();
    for (WorkloadRequest r : requests) {
      if (ticks.isEmpty() || ticks.get(ticks.size() - 1) != r.arrivalMicros()) {
        ticks.add(r.arrivalMicros());
      }
    }
    long[] gaps = new long[Math.max(0, ticks.size() - 1)];
    for (int i = 0; i < gaps.length; i++) {
      gaps[i] = ticks.get(i + 1) - ticks.get(i);
    }
    java.util.Arrays.sort(gaps);
    long lastWidth = gaps.length == 0 ? 0 : gaps[gaps.length / 2];
    java.util.SplittableRandom random = new java.util.SplittableRandom(spreadSeed);
    List<WorkloadRequest> out = new ArrayList<>(requests.size());
    int tick = 0;
    for (WorkloadRequest r : requests) {
      while (ticks.get(tick) != r.arrivalMicros()) {
        tick++;
      }
      long width = tick + 1 < ticks.size() ? ticks.get(tick + 1) - ticks.get(tick) : lastWidth;
      long at = r.arrivalMicros() + (width <= 0 ? 0 : (long) (random.nextDouble() * width));
      out.add(r.withIndexAndArrival(r.index(), at));
    }
    Workload spread = of(name, seed, blockTokens, out).withPrograms(programs);
    return firstUserSegment < 0 ? spread : spread.withFirstUserSegment(firstUserSegment);
  }

  /**
   * The same requests, each arriving later by a uniform draw in {@code [0, maxMicros)} from {@code
   * jitterSeed}; sorted and renumbered as {@link #of} does. A replay decides each request on the
   * state the earlier ones left, so on a trace of long prompts and full caches the order of two
   * requests a millisecond apart can move a whole replay's hit rate by several thousandths: replays
   * under a few draws of a jitter far below any timing the trace means show how far a single
   * replay's figures are to be trusted. {@code maxMicros} 0 returns this workload. O(n log n).
   *
   * @throws IllegalArgumentException if {@code maxMicros} is negative
   */
  public Workload jitter(long jitterSeed, long maxMicros) {
    if (maxMicros < 0) {
      throw new IllegalArgumentException("jitter must be >= 0 microseconds, got " + maxMicros);
    }
    if (maxMicros == 0) {
      return this;
    }
    java.util.SplittableRandom random = new java.util.SplittableRandom(jitterSeed);
    List<WorkloadRequest> out = new ArrayList<>(requests.size());
    for (WorkloadRequest r : requests) {
      out.add(r.withIndexAndArrival(r.index(), r.arrivalMicros() + random.nextLong(maxMicros)));
    }
    Workload spread = of(name, seed, blockTokens, out).withPrograms(programs);
    return firstUserSegment < 0 ? spread : spread.withFirstUserSegment(firstUserSegment);
  }

  /** The first {@code n} requests (all of them if there are fewer). */
  public Workload limit(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("limit must be >= 0, got " + n);
    }
    return n >= requests.size()
        ? this
        : new Workload(name, seed, blockTokens, requests.subList(0, n), firstUserSegment, programs);
  }

  @Override
  public String toString() {
    return "Workload[" + name + ", " + requests.size() + " requests, seed " + seed + "]";
  }
}
