package io.kvrouter.sim;

/**
 * One replica a {@link SimFleet} serves: a rank of one simulated engine, described as a replica
 * agent is told of a real engine's.
 *
 * @param replicaId the engine's replica id
 * @param dpRank data-parallel rank (0 for a single-rank engine)
 * @param model served model name
 * @param baseUrl the engine's OpenAI base URL
 * @param blockSize the engine's KV block size
 * @param kvEventsEndpoint the rank's ZMQ PUB endpoint
 * @param replayEndpoint the rank's ZMQ replay endpoint
 * @param role {@code both}, {@code prefill} or {@code decode}
 * @param dpSize data-parallel ranks of the engine
 */
public record SimReplica(
    String replicaId,
    int dpRank,
    String model,
    String baseUrl,
    int blockSize,
    String kvEventsEndpoint,
    String replayEndpoint,
    String role,
    int dpSize) {}
