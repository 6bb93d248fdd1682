package io.kvrouter.loadtest.workload;

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
}
