package io.kvrouter.loadtest.lab;

/**
 * What a run measured of the programs of a workload ({@link LabPrograms}).
 *
 * @param continuingTtft TTFT of the continuing turns (every request of a program but its first)
 * @param sessionCompletion a top-level program's first arrival to its last token
 * @param missingTokens per continuing turn, the prompt tokens the engine did not hold when it first
 *     admitted it
 * @param sessions top-level programs that finished
 * @param warmedTokens prompt tokens warm-ups prefilled
 * @param warmsDropped warm-ups cancelled, preempted or refused for want of headroom
 * @param ttftByRequest each request's TTFT in ms by request index (-1: none), never mutated
 */
public record ProgramResult(
    Latency continuingTtft,
    Latency sessionCompletion,
    Latency missingTokens,
    int sessions,
    long warmedTokens,
    long warmsDropped,
    double[] ttftByRequest) {}
