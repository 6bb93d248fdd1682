package io.kvrouter.loadtest.workload;

import java.util.ArrayList;
import java.util.List;

/**
 * Prompt layout shared by the grouped shared-prefix generators: prompt {@code (group, user)} is the
 * group's shared prefix ({@code systemTokens}, one segment keyed by the group) followed by the
 * user's own question ({@code questionTokens}, one segment keyed by group and user). So prompts of
 * a group share exactly {@code systemTokens} leading tokens, and prompts of different groups share
 * none.
 *
 * <p>Stateless; O(1) per prompt (segments only, nothing expanded).
 */
final class SharedPrefixPrompts {

  private SharedPrefixPrompts() {}

  /** The grid of a grouped shared-prefix workload. */
  interface Shape {
    int groups();

    int promptsPerGroup();

    int systemTokens();

    int questionTokens();

    int outputTokens();
  }

  static PromptTokens prompt(
      TokenExpander expander,
      long namespace,
      int group,
      int user,
      int systemTokens,
      int questionTokens) {
    long systemKey = TokenExpander.key(namespace, 1, group);
    long questionKey = TokenExpander.key(namespace, 2, group, user);
    return PromptTokens.empty(expander)
        .extend(systemKey, systemTokens)
        .extend(questionKey, questionTokens);
  }

  static String session(int group) {
    return "group-" + group;
  }

  /**
   * Every prompt of the grid, group by group, as requests not yet indexed or timed, each asking for
   * the shape's output tokens.
   */
  static List<WorkloadRequest> grid(TokenExpander expander, long namespace, Shape shape) {
    List<WorkloadRequest> requests = new ArrayList<>(shape.groups() * shape.promptsPerGroup());
    for (int g = 0; g < shape.groups(); g++) {
      for (int p = 0; p < shape.promptsPerGroup(); p++) {
        PromptTokens prompt =
            prompt(expander, namespace, g, p, shape.systemTokens(), shape.questionTokens());
        requests.add(new WorkloadRequest(0, 0, session(g), 0, prompt, shape.outputTokens(), null));
      }
    }
    return requests;
  }
}
