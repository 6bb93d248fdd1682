package io.kvrouter.protocol;

/**
 * One KV-cache lifecycle event of one replica, already translated from the engine's hashes to
 * router block keys by the replica agent. Past tense, as everything that happened.
 */
public sealed interface KvEvent permits BlocksStored, BlocksRemoved, ReplicaCleared, WindowBlocks {}
