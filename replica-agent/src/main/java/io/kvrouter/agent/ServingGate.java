package io.kvrouter.agent;

/**
 * When a replica may be served, in plain Java: the {@link ReplicaAgent}'s rules for registering it,
 * publishing its heartbeats and probing its alignment, fed with what the actor hears and answering
 * with the {@link Steps} it must take.
 *
 * <ul>
 *   <li>A replica is registered once its engine answers a health check, no interruption is pending,
 *       and (when the agent probes) the alignment probe passed; it is deregistered after {@code
 *       deadAfterFailures} failed checks, or when the probe found a mismatch the agent refuses.
 *   <li>With a KV-event subscriber, the first failed check after a good one is an interruption:
 *       until the subscriber has settled it for a later check (blocks kept, or a new epoch) nothing
 *       is published and nothing registered. A scrape sent before the last failed check does not
 *       speak for the engine as it is now. A check answered after a later one was already taken (it
 *       waited out the probe timeout on a stall) is ignored.
 *   <li>An engine restart (a new process) is probed again; a probe of a replaced process is
 *       ignored.
 *   <li>Before each registration the engine says which APIs ({@link EngineProbe#apis}) and LoRA
 *       adapters ({@link EngineProbe#adapters}) it serves: ingresses read a replica's info once per
 *       registration, and an engine replaced by a newer build while it was down may serve others.
 *   <li>A draining node deregisters the replica for good.
 * </ul>
 *
 * Not thread-safe: the actor owns it.
 */
final class ServingGate {

  /** What the actor does after an event. */
  record Steps(
      boolean tellHealthLost,
      boolean probe,
      boolean learnApis,
      boolean register,
      boolean deregister) {
    static final Steps NONE = new Steps(false, false, false, false, false);
  }

  private enum Alignment {
    UNCHECKED,
    CHECKING,
    PASSED,
    REFUSED
  }

  private final boolean settlesInterruptions;
  private final boolean probes;
  private final boolean refuseOnMismatch;
  private final int deadAfterFailures;
  private boolean registered;
  private boolean healthy;
  private boolean awaitingProof;
  private int failures;
  private long tick;
  private long lastLossTick = -1;
  private long newestAnswer = -1;
  private Alignment alignment = Alignment.UNCHECKED;
  private long probeGeneration;
  private boolean apisKnown;
  private boolean learningApis;
  private boolean draining;

  /**
   * @param settlesInterruptions a KV-event subscriber watches the engine (not approximate mode)
   * @param probes the alignment probe runs
   * @param refuseOnMismatch a mismatched replica is not served
   * @param deadAfterFailures failed checks before the replica is deregistered
   */
  ServingGate(
      boolean settlesInterruptions,
      boolean probes,
      boolean refuseOnMismatch,
      int deadAfterFailures) {
    this.settlesInterruptions = settlesInterruptions;
    this.probes = probes;
    this.refuseOnMismatch = refuseOnMismatch;
    this.deadAfterFailures = deadAfterFailures;
    this.awaitingProof = settlesInterruptions; // the first healthy check settles it
  }

  /** The number of the next health check. */
  long nextTick() {
    return ++tick;
  }

  /**
   * Health check {@code checked} answered {@code ok}. An answer older than one already taken says
   * nothing new and is ignored: checks go out every interval and each may wait up to the probe
   * timeout, so a check stuck on a stall can time out after a later one came back healthy, and
   * would otherwise interrupt an engine that has already answered since (withholding heartbeats
   * until a replay proves it again). A restart after that later answer is still found: by the next
   * check's process start time, a live seq that goes back, or the audit of a healthy heartbeat.
   */
  Steps checked(long checked, boolean ok) {
    if (checked <= newestAnswer) {
      return Steps.NONE;
    }
    newestAnswer = checked;
    if (ok) {
      failures = 0;
      healthy = true;
      return next();
    }
    healthy = false;
    boolean lost = ++failures == 1 && settlesInterruptions;
    if (lost) {
      awaitingProof = true;
      lastLossTick = Math.max(lastLossTick, checked);
    }
    boolean dead = failures >= deadAfterFailures && registered;
    if (dead) {
      unregistered();
    }
    return new Steps(lost, false, false, false, dead);
  }

  /** True when a scrape sent with check {@code checked} speaks for the engine as it is now. */
  boolean current(long checked) {
    return checked > lastLossTick;
  }

  /** True when heartbeats may go out (no interruption pending). */
  boolean mayPublish() {
    return !awaitingProof;
  }

  /** The subscriber settled every interruption as of check {@code checked}. */
  Steps settled(long checked) {
    if (!awaitingProof || checked <= lastLossTick) {
      return Steps.NONE;
    }
    awaitingProof = false;
    return next();
  }

  /** The engine is a new process: probe it again. */
  Steps restarted() {
    alignment = Alignment.UNCHECKED;
    if (!registered) {
      apisKnown = false; // perhaps another build: ask again before registering
    }
    probeGeneration++;
    return next();
  }

  /** The probe started at {@code generation} found a mismatch or not. */
  Steps probed(long generation, boolean mismatch) {
    if (generation != probeGeneration) {
      return Steps.NONE; // probed a process that has been replaced since
    }
    alignment = mismatch && refuseOnMismatch ? Alignment.REFUSED : Alignment.PASSED;
    return next();
  }

  /** The engine said which APIs it serves ({@code answered}), or did not answer (ask again). */
  Steps apisLearned(boolean answered) {
    learningApis = false;
    apisKnown = answered;
    return answered ? next() : Steps.NONE;
  }

  /** The node drains: deregister for good. */
  Steps drain() {
    draining = true;
    boolean deregister = registered;
    unregistered();
    return new Steps(false, false, false, false, deregister);
  }

  /** The generation a probe started now belongs to. */
  long probeGeneration() {
    return probeGeneration;
  }

  boolean registered() {
    return registered;
  }

  private void unregistered() {
    registered = false;
    apisKnown = false;
  }

  private Steps next() {
    if (!healthy || awaitingProof || draining) {
      return Steps.NONE;
    }
    boolean probe = probes && alignment == Alignment.UNCHECKED;
    if (probe) {
      alignment = Alignment.CHECKING;
    }
    if (probes && alignment == Alignment.REFUSED) {
      boolean deregister = registered;
      unregistered();
      return new Steps(false, probe, false, false, deregister);
    }
    boolean ready = !registered && (!probes || alignment == Alignment.PASSED);
    boolean learn = ready && !apisKnown && !learningApis;
    learningApis |= learn;
    boolean register = ready && apisKnown;
    registered |= register;
    return new Steps(false, probe, learn, register, false);
  }
}
