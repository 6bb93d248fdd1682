package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.MultiTurnChatWorkload;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.tracker.policy.Fixture;
import io.kvrouter.tracker.policy.Policy;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class LabRequestViewTest {

  /**
   * KubeAI hashes the first 100 characters of a chat's first user message, its system prompt left
   * out. Sixteen chats of three turns share a 1,024-token system prompt: keyed on the prompt, every
   * request's first two blocks are the system prompt's, so CHWBL sends every chat to one home (the
   * old baseline); keyed on the first user message, each chat keeps one home for all its turns and
   * the chats spread over the ring (pinned: replicas 1, 3, 5 and 6 of 8 for this seed).
   */
  @Test
  void chwbl_keysAChatOnItsFirstUserMessage_soChatsSharingASystemPromptSpreadOverTheRing() {
    Workload w =
        MultiTurnChatWorkload.generate(
            new MultiTurnChatWorkload.Config(16, 3, 1024, 256, 64, 1.0, 10.0), 1);
    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, 16);
    LabRequestView byMessage = LabRequestView.of(w, keys, "chwbl");
    LabRequestView byPrompt = LabRequestView.of(w, keys, "round_robin");
    Fixture f = new Fixture(8);
    Policy chwbl = Fixture.policy("chwbl", 1);

    Map<String, Set<Integer>> homes = new TreeMap<>();
    Set<Integer> promptHomes = new HashSet<>();
    for (int i = 0; i < w.size(); i++) {
      homes
          .computeIfAbsent(w.get(i).session(), s -> new HashSet<>())
          .add(f.rank(chwbl, byMessage.routerKeys(i))[0]);
      promptHomes.add(f.rank(chwbl, byPrompt.routerKeys(i))[0]);
    }

    assertThat(promptHomes).containsExactly(0);
    assertThat(homes).hasSize(16).allSatisfy((session, h) -> assertThat(h).hasSize(1));
    Set<Integer> distinct = new HashSet<>();
    homes.values().forEach(distinct::addAll);
    assertThat(distinct).containsExactlyInAnyOrder(1, 3, 5, 6);
  }

  /** KubeAI hashes the adapter's name with the prefix: the same first message under two keys. */
  @Test
  void chwbl_keysTheFirstUserMessageWithTheRequestsAdapter() {
    Workload w =
        MultiTurnChatWorkload.generate(
            new MultiTurnChatWorkload.Config(2, 2, 1024, 256, 64, 1.0, 10.0), 1);
    String[] adapters = new String[w.size()];
    java.util.Arrays.fill(adapters, "sql-lora");
    LabRequestView base = LabRequestView.of(w, PromptKeys.compute(w, LabConfig.MODEL, 16), "chwbl");
    LabRequestView lora =
        LabRequestView.of(w, PromptKeys.compute(w, LabConfig.MODEL, 16, adapters), "chwbl");
    for (int i = 0; i < w.size(); i++) {
      assertThat(lora.routerKeys(i)).hasSameSizeAs(base.routerKeys(i));
      assertThat(lora.routerKeys(i)[0]).isNotEqualTo(base.routerKeys(i)[0]);
    }
  }
}
