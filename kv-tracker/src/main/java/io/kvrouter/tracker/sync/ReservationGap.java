package io.kvrouter.tracker.sync;

/** A tracker misses reservation events of {@code origin} from {@code fromSeq}: ask it to replay. */
public record ReservationGap(String origin, long fromSeq) {}
