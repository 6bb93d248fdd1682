package io.kvrouter.tracker;

/**
 * The size of a tracker's state at one moment, for metrics and the soak test: what must stay flat
 * under a steady workload.
 *
 * @param indexBlocks distinct blocks (nodes) in the prefix index
 * @param indexHoldings (replica, block) holdings the index's bridges map
 * @param indexBytes estimated heap held by the index's tables, bridges and predicted runs
 * @param predictedRuns live predicted runs
 * @param openReservations reservations in the ledger, every origin
 * @param detachedReservations of those, the ones on replicas this tracker does not know
 * @param evictedBlocks holdings the index's memory budget evicted so far
 */
public record TrackerStats(
    long indexBlocks,
    long indexHoldings,
    long indexBytes,
    long predictedRuns,
    long openReservations,
    long detachedReservations,
    long evictedBlocks) {}
