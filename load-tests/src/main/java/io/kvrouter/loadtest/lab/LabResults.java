package io.kvrouter.loadtest.lab;

import java.util.List;

/**
 * Everything one lab run produced.
 *
 * @param workload workload name
 * @param requests requests replayed
 * @param config the run's settings
 * @param bound what a single unlimited cache reaches
 * @param policies one result per policy, in the order asked for
 * @param command the command line that produced it (for the report)
 * @param wallMillis wall time of the whole run (keys, bound and every policy)
 */
public record LabResults(
    String workload,
    int requests,
    LabConfig config,
    SingleCacheBound bound,
    List<PolicyResult> policies,
    String command,
    long wallMillis) {

  public LabResults {
    policies = List.copyOf(policies);
  }

  /** The result of {@code policy}, or null. */
  public PolicyResult policy(String policy) {
    return policies.stream().filter(p -> p.policy().equals(policy)).findFirst().orElse(null);
  }
}
