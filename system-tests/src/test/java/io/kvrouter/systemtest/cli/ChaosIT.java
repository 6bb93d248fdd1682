package io.kvrouter.systemtest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvrouter.loadtest.bench.ArrivalSchedule;
import io.kvrouter.loadtest.bench.BenchConfig;
import io.kvrouter.loadtest.bench.BenchRequestSource;
import io.kvrouter.loadtest.bench.BenchRun;
import io.kvrouter.loadtest.bench.BenchRunner;
import io.kvrouter.loadtest.bench.RequestOutcome;
import io.kvrouter.loadtest.bench.SyntheticWorkloads;
import io.kvrouter.protocol.metrics.PrometheusText;
import io.kvrouter.testing.LoopbackHttp;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * Chaos under load with real processes ({@link ChaosCluster}: two ingresses, two agents, two
 * simulated engines in processes of their own): a bench sends a shared-prefix workload to both
 * ingresses (following their {@code /ready}, as a load balancer does) while a seeded {@link
 * ChaosSchedule} SIGKILLs engines, agents and ingresses and starts them again, one fault at a time.
 *
 * <p>Each request ends in one of these ways; the test demands that none is <em>lost</em>:
 *
 * <ul>
 *   <li><b>completed</b>: streamed to {@code [DONE]};
 *   <li><b>clean error</b>: an HTTP error status (429, 502, 503) with its error object, before any
 *       byte of an answer;
 *   <li><b>refused</b>: the connection was refused (an ingress that was down; never accepted);
 *   <li><b>died with its ingress</b>: the ingress it was sent to was SIGKILLed while it was in
 *       flight, between the signal and the process's exit included (nothing can answer for a killed
 *       process; a connection made to a dying JVM is accepted by the kernel and reset when it
 *       exits: seen once in a clean CI run, 67 ms after a kill that took longer than that);
 *   <li><b>cut by an engine kill</b>: the stream had started and an engine was SIGKILLed while it
 *       ran (an answer under way that could not move to another engine: docs/traffic.md, streams
 *       whose engine dies; one that moved is completed);
 *   <li><b>ended by its downed ingress</b>: the cluster downed the ingress it was on (the split
 *       brain resolver, when faults come faster than it settles), which ended it at once with the
 *       error event saying so; or <b>died with its downed ingress</b>: its connection was reset as
 *       that ingress's process exited (seen gone by the supervisor within its lag of the end);
 *   <li><b>lost</b>: anything else (a timeout, a reset or truncated stream on a live ingress, an
 *       unclean error).
 * </ul>
 *
 * <p><b>Long answers</b> ({@link LongAnswers}): three clients more each stream one long answer
 * after the other (600-token chat texts, 600-token completions texts, and chat answers that are a
 * 300-token tool call, one kind each), and each engine kill waits until a text answer streams from
 * that engine (with a tool call at the same time, when one comes within 10 s), so that it cuts
 * them. Every text answer not excused as above must be whole: {@code [DONE]}, no error event, the
 * requested token count in its usage, and its text equal to an uncut run of the same request after
 * the chaos (the simulated engine's answer depends on its context only, so the replica does not
 * matter): an answer cut by an engine kill migrates to the other engine and goes on as if uncut. A
 * tool call cut inside its arguments cannot migrate: it ends with the error event, and the
 * ingresses count it ({@code kvrouter_migrations_total{outcome="refused_tool_call"}}, sampled
 * through every ingress incarnation). With {@code -Dkvrouter.chaos.migration-limit=0} (migration
 * off) the cut text answers end with the error event, and the test fails.
 *
 * <p><b>Misroutes</b>: a monitor polls every ingress every 250 ms for its replica listing and its
 * per-replica attempt counter ({@code kvrouter_replica_attempts_total}); a counter that grows
 * between two scrapes both taken while the listing, read before and after them, did not hold the
 * replica is a request sent to a replica after its removal.
 *
 * <p>A node that exits on its own with a non-zero status (the cluster downed it) is started again,
 * as its supervisor would ({@link ChaosCluster#supervise}); the summary lists such exits.
 *
 * <p>At the end every node is up again, and within a deadline every ingress lists both replicas
 * with nothing in flight, the consistency view is converged everywhere, and each replica's blocks
 * in the trackers equal the blocks its engine holds ({@code GET /sim/cache}).
 *
 * <p>The short run in the suite lasts {@code kvrouter.chaos.seconds} (default 35) of faults with
 * seed {@code kvrouter.chaos.seed} (default 13): on the 2-core machine the seed's first four
 * faults, an engine, an agent and each ingress, as in the README's five-run table (the first three
 * always run; 60 s added an ingress and an engine again, and 25 s to the suite). The README gives
 * the command for a longer one.
 */
class ChaosIT {

  /**
   * The failure detector tolerates pauses of 8 s (the dev profile's 2 s made starved JVMs on a
   * loaded machine drop out of the cluster, which a test of chosen faults must not mistake for one
   * of them); the split brain resolver still downs a node that is really gone.
   */
  static final String CONFIG =
      "kvrouter.node.drain { unready-delay = 0s, grace-period = 10s }\n"
          + "pekko.cluster.failure-detector.acceptable-heartbeat-pause = 8s\n"
          // 0 (-Dkvrouter.chaos.migration-limit=0) shows what the long answers lose without it
          + "kvrouter.ingress.migration.limit = "
          + Integer.getInteger("kvrouter.chaos.migration-limit", 3)
          + "\n";

  private static final Duration RECOVERY = Duration.ofSeconds(120);

  /**
   * The error event a downed ingress ends its streams with ({@code InFlightRequests}): a clean end
   * the client can act on, as {@code DownedIngressIT} checks.
   */
  private static final String DOWNED_INGRESS_ERROR = "This ingress was removed from the cluster";

  /**
   * From a reset connection to the supervisor seeing its downed ingress gone: a downed ingress
   * unbinds its port first (resetting connections it had not read yet), and its process exits once
   * its actor system has terminated; the supervisor looks every half second. Seen in the 600 s run:
   * resets at 380.1 s, the exit seen at 382.1 s.
   */
  private static final long SUPERVISOR_LAG_NANOS = 5_000_000_000L;

  /**
   * A SIGKILL: sent at {@code atNanos}; the process had exited by {@code exitedNanos} (a JVM under
   * load takes a while to go, and until it has, the kernel still accepts connections on its port
   * and resets them when it exits).
   */
  private record Kill(ChaosSchedule.Kind kind, int victim, long atNanos, long exitedNanos) {

    /** True when the process was being killed while a request sent then and ended then ran. */
    boolean during(RequestOutcome o) {
      return atNanos <= o.endNanos() && exitedNanos >= o.sentNanos();
    }
  }

  @Test
  void
      killsOfEnginesAgentsAndIngressesUnderABench_loseNoRequest_misrouteNone_andTheViewEndsAccurate()
          throws Exception {
    long seconds = Long.getLong("kvrouter.chaos.seconds", 35);
    long seed = Long.getLong("kvrouter.chaos.seed", 13);
    ActorTestKit kit = ActorTestKit.create();
    try (ChaosCluster cluster = new ChaosCluster(CONFIG, 2.0)) {
      // One at a time, each once it answers: six JVMs started at once on a loaded machine take
      // longer to come up than one after the other.
      for (ChaosCluster.Node n : cluster.all()) {
        cluster.start(n);
        if (n.httpPort > 0) {
          awaitHealthy(kit, n);
        }
      }
      for (ChaosCluster.Node i : cluster.ingresses) {
        awaitServing(kit, cluster, i);
      }

      AtomicBoolean enough = new AtomicBoolean();
      BenchRequestSource workload =
          SyntheticWorkloads.sharedPrefix(
              8, 100_000, 150, 20, 16, ArrivalSchedule.poisson(4, seed), seed);
      BenchRunner runner =
          new BenchRunner(
                  BenchConfig.defaults(
                          cluster.ingresses.stream().map(n -> URI.create(n.url())).toList(),
                          ChaosCluster.MODEL)
                      .withLimits(-1, Duration.ofHours(2), 128, Duration.ofSeconds(90)))
              .followReadiness(Duration.ofMillis(100));
      CompletableFuture<BenchRun> run =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return runner.run(NodeProcesses.until(workload, enough));
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      LongSupplier clock = () -> (long) (runner.counters().elapsedSeconds() * 1e9);
      cluster.supervise(clock);
      LongAnswers longAnswers = new LongAnswers(cluster, clock);
      List<Thread> longWorkers = new ArrayList<>();
      for (LongAnswers.Kind kind : LongAnswers.Kind.values()) {
        longWorkers.add(new Thread(longAnswers.worker(kind), "chaos-long-" + kind));
      }
      longWorkers.add(new Thread(longAnswers.sampler(), "chaos-migration-sampler"));
      longWorkers.forEach(Thread::start);
      Misroutes misroutes = new Misroutes(cluster);
      Thread monitor = new Thread(misroutes, "chaos-misroute-monitor");
      monitor.setDaemon(true);
      monitor.start();

      List<Kill> kills = new CopyOnWriteArrayList<>();
      List<ChaosSchedule.Fault> faults = ChaosSchedule.of(seed, 10_000, 2, 2, 2);
      for (int n = 0; n < faults.size(); n++) {
        ChaosSchedule.Fault f = faults.get(n);
        // The first three faults (one of each kind) always run, however long recoveries take.
        if (n >= 3 && runner.counters().elapsedSeconds() > seconds) {
          break;
        }
        ChaosCluster.Node victim =
            switch (f.kind()) {
              case ENGINE -> cluster.engines.get(f.victim());
              case AGENT -> cluster.agents.get(f.victim());
              case INGRESS -> cluster.ingresses.get(f.victim());
            };
        if (f.kind() == ChaosSchedule.Kind.ENGINE) {
          awaitLongAnswerOn(kit, longAnswers, victim);
        }
        long at = (long) (runner.counters().elapsedSeconds() * 1e9);
        cluster.kill(victim);
        long exited = (long) (runner.counters().elapsedSeconds() * 1e9);
        kills.add(new Kill(f.kind(), f.victim(), at, exited));
        System.out.printf("chaos: %.1f s SIGKILL %s%n", at / 1e9, victim.name);
        Thread.sleep(f.downtimeMillis()); // the fault's downtime, from the seeded schedule
        cluster.start(victim);
        for (ChaosCluster.Node i : cluster.ingresses) {
          awaitServing(kit, cluster, i);
        }
        System.out.printf(
            "chaos: %.1f s %s back and serving%n", runner.counters().elapsedSeconds(), victim.name);
        Thread.sleep(f.gapMillis()); // the quiet time before the next fault, seeded
      }
      enough.set(true);
      longAnswers.stop();
      for (Thread t : longWorkers) {
        t.join();
      }
      BenchRun done = run.get(5, TimeUnit.MINUTES);
      misroutes.stop();
      monitor.join();

      Map<String, Integer> ends = new TreeMap<>();
      List<String> lost = new ArrayList<>();
      for (RequestOutcome o : done.outcomes()) {
        String end = classify(o, kills, cluster.selfExits());
        ends.merge(end, 1, Integer::sum);
        if (end.equals("lost")) {
          lost.add(
              String.format(
                  "#%d target %d sent %.3f s ended %.3f s: %s %d %s",
                  o.index(),
                  o.target(),
                  o.sentNanos() / 1e9,
                  o.endNanos() / 1e9,
                  o.status(),
                  o.httpStatus(),
                  o.error()));
        }
      }
      Map<ChaosSchedule.Kind, Integer> killed = new TreeMap<>();
      kills.forEach(k -> killed.merge(k.kind(), 1, Integer::sum));
      System.out.printf(
          "chaos: seed %d, %.0f s, %d requests %s; kills %s; lost %d, misroutes %d;"
              + " exits on their own, started again: %s%n",
          seed,
          runner.counters().elapsedSeconds(),
          done.outcomes().size(),
          ends,
          killed,
          lost.size(),
          misroutes.found().size(),
          cluster.selfExits());

      // The end state first, so that one run shows both when both fail.
      awaitAccurateAndIdle(kit, cluster);
      LongVerdict verdict = judge(longAnswers, kills, cluster.selfExits(), clock);
      System.out.printf(
          "chaos: long answers %s; migrations %s%n", verdict.ends(), verdict.counts());
      assertThat(killed.keySet()).as("every kind of node was killed").hasSize(3);
      assertThat(lost).as("lost requests%n%s", cluster.logs()).isEmpty();
      assertThat(misroutes.found()).as("requests sent to a removed replica").isEmpty();
      assertThat(ends.getOrDefault("completed", 0)).isPositive();
      assertThat(verdict.broken())
          .as("long answers not whole, or not the uncut answer (migration moves them on)")
          .isEmpty();
      assertThat(verdict.ends().getOrDefault("whole", 0)).isPositive();
      assertThat(verdict.counts().getOrDefault("migrated", 0.0))
          .as("streams moved to another engine")
          .isPositive();
      if (verdict.ends().getOrDefault("tool call refused", 0) > 0) {
        assertThat(verdict.counts().getOrDefault("refused_tool_call", 0.0))
            .as("cut tool calls are counted")
            .isPositive();
      }
    } finally {
      kit.shutdownTestKit();
    }
  }

  /** How one request ended (see the class comment). */
  private static String classify(
      RequestOutcome o, List<Kill> kills, List<ChaosCluster.SelfExit> selfExits) {
    switch (o.status()) {
      case OK:
        return "completed";
      case DROPPED:
        return "not sent (client cap)";
      case HTTP_ERROR:
        return o.httpStatus() == 429 || o.httpStatus() == 502 || o.httpStatus() == 503
            ? "clean error"
            : "lost";
      default:
        break;
    }
    String error = String.valueOf(o.error());
    if (o.status() == RequestOutcome.Status.SEND_ERROR && error.contains("ConnectException")) {
      return "refused";
    }
    for (Kill k : kills) {
      boolean during = k.during(o);
      if (during && k.kind() == ChaosSchedule.Kind.INGRESS && k.victim() == o.target()) {
        return "died with its ingress";
      }
      if (during && k.kind() == ChaosSchedule.Kind.ENGINE && o.hasFirstChunk()) {
        return "cut by an engine kill";
      }
    }
    if (error.contains(DOWNED_INGRESS_ERROR)) {
      return "ended by its downed ingress";
    }
    for (ChaosCluster.SelfExit e : selfExits) {
      // Seen gone within SUPERVISOR_LAG_NANOS of the unbind that reset the connection.
      if (e.node().name.equals("ingress-" + o.target())
          && e.seenNanos() >= o.sentNanos()
          && e.seenNanos() <= o.endNanos() + SUPERVISOR_LAG_NANOS) {
        return "died with its downed ingress";
      }
    }
    return "lost";
  }

  /** How long an engine kill waits for long answers to cut, at each of its two tries. */
  private static final Duration LONG_ANSWER_WAIT = Duration.ofSeconds(10);

  /**
   * How the long answers ended ({@code whole}: equal to the uncut reference, with its usage; {@code
   * tool call refused}: a tool call cut by an engine kill ended with the error event), those that
   * are neither nor excused (as in {@link #classify}: their ingress died, or they never started),
   * and the ingresses' migrations per outcome.
   */
  private record LongVerdict(
      Map<String, Integer> ends, List<String> broken, Map<String, Double> counts) {}

  private static LongVerdict judge(
      LongAnswers answers,
      List<Kill> kills,
      List<ChaosCluster.SelfExit> selfExits,
      LongSupplier clock) {
    Map<String, LongAnswers.Streamed> references = new HashMap<>();
    Map<String, Integer> ends = new TreeMap<>();
    List<String> broken = new ArrayList<>();
    for (LongAnswers.Streamed s : answers.answers()) {
      String excuse = excuse(s, kills, selfExits);
      if (excuse != null) {
        ends.merge(excuse, 1, Integer::sum);
        continue;
      }
      if (s.kind() == LongAnswers.Kind.TOOL_CALL) {
        boolean whole =
            s.done()
                && s.error() == null
                && s.failure() == null
                && LongAnswers.wholeCall(s.arguments());
        boolean refused = s.error() != null && s.done() && s.failure() == null;
        ends.merge(
            whole ? "tool call whole" : refused ? "tool call refused" : "broken", 1, Integer::sum);
        if (!whole && !refused) {
          broken.add(s.describe());
        }
        continue;
      }
      LongAnswers.Streamed reference =
          references.computeIfAbsent(
              s.kind() + "#" + s.prompt(), k -> answers.send(s.kind(), s.prompt(), 0, clock));
      boolean whole =
          s.done()
              && s.error() == null
              && s.failure() == null
              && s.completionTokens() == LongAnswers.MAX_TOKENS
              && reference.completionTokens() == LongAnswers.MAX_TOKENS
              && s.text().equals(reference.text());
      ends.merge(whole ? "whole" : "broken", 1, Integer::sum);
      if (!whole) {
        broken.add(
            s.describe()
                + (s.text().equals(reference.text())
                    ? ""
                    : String.format(
                        ", text differs from the reference at %d of %d/%d chars",
                        mismatch(s.text(), reference.text()),
                        s.text().length(),
                        reference.text().length())));
      }
    }
    return new LongVerdict(ends, broken, answers.migrations());
  }

  private static int mismatch(String a, String b) {
    int i = 0;
    while (i < a.length() && i < b.length() && a.charAt(i) == b.charAt(i)) {
      i++;
    }
    return i;
  }

  /** Why a long answer is not held to the reference, as {@link #classify} excuses a request. */
  private static String excuse(
      LongAnswers.Streamed s, List<Kill> kills, List<ChaosCluster.SelfExit> selfExits) {
    if (!s.started() && String.valueOf(s.failure()).contains("ConnectException")) {
      return "refused";
    }
    if (s.status() == 429 || s.status() == 502 || s.status() == 503) {
      return "clean error";
    }
    for (Kill k : kills) {
      if (k.kind() == ChaosSchedule.Kind.INGRESS
          && k.victim() == s.target()
          && k.atNanos() <= s.endNanos()
          && k.exitedNanos() >= s.sentNanos()) {
        return "died with its ingress";
      }
    }
    if (String.valueOf(s.error()).contains(DOWNED_INGRESS_ERROR)) {
      return "ended by its downed ingress";
    }
    for (ChaosCluster.SelfExit e : selfExits) {
      if (e.node().name.equals("ingress-" + s.target())
          && e.seenNanos() >= s.sentNanos()
          && e.seenNanos() <= s.endNanos() + SUPERVISOR_LAG_NANOS) {
        return "died with its downed ingress";
      }
    }
    return null;
  }

  /**
   * Waits until long answers stream from the engine about to be killed, so that each engine kill
   * cuts some and shows what becomes of them: a text answer and a tool call at once for up to
   * {@link #LONG_ANSWER_WAIT}, else a text answer (a chat or a completion) for as long again.
   */
  private static void awaitLongAnswerOn(
      ActorTestKit kit, LongAnswers answers, ChaosCluster.Node engine) {
    String on = engine.name;
    if (awaits(kit, () -> answers.streamingOn(LongAnswers.Kind.TOOL_CALL, on) && text(answers, on))
        || awaits(kit, () -> text(answers, on))) {
      return;
    }
    System.out.printf("chaos: no long answer streamed from %s; killed anyway%n", on);
  }

  private static boolean text(LongAnswers answers, String replica) {
    return answers.streamingOn(LongAnswers.Kind.CHAT, replica)
        || answers.streamingOn(LongAnswers.Kind.COMPLETION, replica);
  }

  /** True once {@code condition} holds, false when it did not within {@link #LONG_ANSWER_WAIT}. */
  private static boolean awaits(ActorTestKit kit, java.util.function.BooleanSupplier condition) {
    try {
      kit.createTestProbe()
          .awaitAssert(
              LONG_ANSWER_WAIT,
              Duration.ofMillis(20),
              () -> {
                assertThat(condition.getAsBoolean()).isTrue();
                return null;
              });
      return true;
    } catch (AssertionError none) {
      return false;
    }
  }

  /** Waits until the node answers {@code /health}. */
  private static void awaitHealthy(ActorTestKit kit, ChaosCluster.Node n) {
    kit.createTestProbe()
        .awaitAssert(
            RECOVERY,
            Duration.ofMillis(200),
            () -> {
              assertThat(n.process.isAlive()).as(n.name).isTrue();
              assertThat(NodeProcesses.status(n.url() + "/health")).as(n.name).isEqualTo(200);
              return null;
            });
  }

  /** Waits until the ingress is ready and lists both replicas. */
  private static void awaitServing(ActorTestKit kit, ChaosCluster cluster, ChaosCluster.Node i) {
    kit.createTestProbe()
        .awaitAssert(
            RECOVERY,
            Duration.ofMillis(200),
            () -> {
              assertThat(NodeProcesses.status(i.url() + "/ready")).as(i.name).isEqualTo(200);
              assertThat(LoopbackHttp.getJson(i.url() + "/admin/replicas").size())
                  .as("%s lists both replicas", i.name)
                  .isEqualTo(2);
              return null;
            });
  }

  /** In flight 0, converged, and each replica's blocks equal to its engine's, on every ingress. */
  private static void awaitAccurateAndIdle(ActorTestKit kit, ChaosCluster cluster) {
    kit.createTestProbe()
        .awaitAssert(
            RECOVERY,
            Duration.ofMillis(500),
            () -> {
              Map<String, Long> held = new HashMap<>();
              for (ChaosCluster.Node e : cluster.engines) {
                held.put(
                    e.url(), LoopbackHttp.getJson(e.url() + "/sim/cache").path("blocks").asLong());
              }
              for (ChaosCluster.Node i : cluster.ingresses) {
                JsonNode view = LoopbackHttp.getJson(i.url() + "/admin/consistency");
                assertThat(view.path("converged").asBoolean()).as("%s: %s", i.name, view).isTrue();
                assertThat(view.path("trackers").size()).as("%s: %s", i.name, view).isEqualTo(2);
                JsonNode replicas = LoopbackHttp.getJson(i.url() + "/admin/replicas");
                assertThat(replicas.size()).isEqualTo(2);
                for (JsonNode r : replicas) {
                  assertThat(r.path("in_flight").asInt()).as("%s: %s", i.name, r).isZero();
                  assertThat(r.path("blocks").asLong())
                      .as("%s: tracker blocks of %s against its engine's", i.name, r)
                      .isEqualTo(held.get(r.path("url").asText()));
                }
              }
              return null;
            });
  }

  /** The misroute monitor of the class comment. */
  private static final class Misroutes implements Runnable {
    private final ChaosCluster cluster;
    private final List<String> found = new CopyOnWriteArrayList<>();
    private final Set<String> known = new TreeSet<>();
    private volatile boolean stopped;

    Misroutes(ChaosCluster cluster) {
      this.cluster = cluster;
    }

    List<String> found() {
      return found;
    }

    void stop() {
      stopped = true;
    }

    @Override
    public void run() {
      // Per ingress: the last scrape of the attempt counters taken while the listing, read before
      // it, did not hold the replica, and the incarnation it was taken from.
      Map<String, Map<String, Double>> absentSince = new HashMap<>();
      Map<String, Integer> incarnation = new HashMap<>();
      while (!stopped) {
        for (ChaosCluster.Node i : cluster.ingresses) {
          try {
            poll(i, absentSince, incarnation);
          } catch (Exception unreachable) {
            absentSince.remove(i.name); // down or restarting: start over
          }
        }
        try {
          Thread.sleep(250); // the monitor's polling interval
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    private void poll(
        ChaosCluster.Node i,
        Map<String, Map<String, Double>> absentSince,
        Map<String, Integer> incarnation)
        throws Exception {
      if (!Integer.valueOf(i.incarnation).equals(incarnation.put(i.name, i.incarnation))) {
        absentSince.remove(i.name);
      }
      Set<String> before = listed(i);
      Map<String, Double> attempts = attempts(i);
      Set<String> after = listed(i);
      known.addAll(before);
      known.addAll(after);
      Map<String, Double> last = absentSince.computeIfAbsent(i.name, k -> new HashMap<>());
      for (String replica : known) {
        boolean absent = !before.contains(replica) && !after.contains(replica);
        if (!absent) {
          last.remove(replica);
          continue;
        }
        double now = attempts.getOrDefault(replica, 0.0);
        Double then = last.put(replica, now);
        if (then != null && now > then) {
          found.add(
              String.format(
                  "%s sent %.0f attempts to %s while it did not list it",
                  i.name, now - then, replica));
        }
      }
    }

    private static Set<String> listed(ChaosCluster.Node i) throws Exception {
      Set<String> out = new TreeSet<>();
      for (JsonNode r : LoopbackHttp.getJson(i.url() + "/admin/replicas")) {
        out.add(r.path("replica").asText());
      }
      return out;
    }

    private static Map<String, Double> attempts(ChaosCluster.Node i) throws Exception {
      Map<String, Double> out = new HashMap<>();
      for (PrometheusText.Sample s :
          PrometheusText.parse(LoopbackHttp.getOk(i.url() + "/metrics")).samples()) {
        if (s.name().equals("kvrouter_replica_attempts_total")) {
          out.merge(s.labels().getOrDefault("replica", ""), s.value(), Double::sum);
        }
      }
      return out;
    }
  }
}
