package io.kvrouter.protocol;

/** The replica dropped its whole prefix cache (vLLM's AllBlocksCleared). */
public record ReplicaCleared() implements KvEvent {}
