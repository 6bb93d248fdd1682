package io.kvrouter.tracker.feed;

/**
 * The tracker refused a batch of {@code replicaId} because earlier ones are missing: the event
 * plane should ask that replica's agent to replay from {@code fromSeq} of {@code epoch}.
 */
public record GapDetected(String replicaId, long epoch, long fromSeq) {}
