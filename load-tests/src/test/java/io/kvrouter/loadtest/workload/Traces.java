package io.kvrouter.loadtest.workload;

/** The two Mooncake traces, read once per test JVM (seed 0). */
final class Traces {

  private static Workload conversation;
  private static Workload synthetic;

  private Traces() {}

  static synchronized Workload conversation() {
    if (conversation == null) {
      conversation = Workloads.byName(Workloads.MOONCAKE_CONVERSATION, java.util.Map.of(), 0L);
    }
    return conversation;
  }

  static synchronized Workload synthetic() {
    if (synthetic == null) {
      synthetic = Workloads.byName(Workloads.MOONCAKE_SYNTHETIC, java.util.Map.of(), 0L);
    }
    return synthetic;
  }
}
