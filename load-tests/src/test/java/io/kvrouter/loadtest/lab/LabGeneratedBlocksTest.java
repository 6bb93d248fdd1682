package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvrouter.loadtest.workload.PromptTokens;
import io.kvrouter.loadtest.workload.TokenExpander;
import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.WorkloadRequest;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.Tier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A lab engine caches the full blocks of the tokens it generates when the workload knows them, as
 * vLLM v1 does ({@code KVCacheManager.allocate_slots} caches up to {@code min(computed + new
 * tokens, request.num_tokens)}, output tokens included; {@code vllm/v1/core/kv_cache_manager.py},
 * commit 003df296): block i is cached once its last token has been computed, so of a prompt of P
 * tokens and an answer of M, the last token of which is never fed back, {@code (P + M − 1) / 16}
 * blocks; and it announces them in its KV events as it announces prompt blocks.
 */
class LabGeneratedBlocksTest {

  private static final int BS = 16;
  private static final int PROMPT = 100;
  private static final int ANSWER = 60;
  private static final int USER = 30;

  /** Blocks the first turn leaves cached: (100 + 60 − 1) / 16 = 9; its prompt alone fills 6. */
  private static final int CACHED_BLOCKS = (PROMPT + ANSWER - 1) / BS;

  /**
   * Turn 0 of a chat (prompt then answer, known), and turn 1 (turn 0's prompt and answer and a new
   * user message) arriving at {@code followUpMicros}.
   */
  private static Workload chat(long followUpMicros) {
    TokenExpander expander = new TokenExpander(7);
    PromptTokens prompt = PromptTokens.empty(expander).extend(1, PROMPT);
    PromptTokens answered = prompt.extend(2, ANSWER);
    PromptTokens next = answered.extend(3, USER);
    return Workload.of(
        "chat",
        7,
        0,
        List.of(
            new WorkloadRequest(0, 0, "s", 0, prompt, ANSWER, null, answered),
            new WorkloadRequest(0, followUpMicros, "s", 1, next, 10, null, next.extend(4, 10))));
  }

  /** {@code announced}: the GPU blocks announced before the follow-up arrived. */
  private record Run(Map<Integer, Integer> cachedTokens, Set<Long> announced) {}

  /** Runs one engine over {@code w}'s requests, each with its engine keys. */
  private static Run run(Workload w, PromptKeys keys, int maxNumSeqs) {
    Map<Integer, Integer> cached = new HashMap<>();
    Set<Long> announced = new HashSet<>();
    LabEngine engine =
        new LabEngine(
            0,
            "r0",
            BS,
            10_000,
            maxNumSeqs,
            8192,
            0,
            0,
            new LabEngine.Listener() {
              @Override
              public void firstToken(LabEngine e, LabSequence s, long t) {}

              @Override
              public void finished(LabEngine e, LabSequence s, long t) {
                cached.put(s.requestIndex, s.cachedPromptTokens);
              }
            });
    long followUp = w.get(w.size() - 1).arrivalMicros();
    LabEngineDrive.run(
        w,
        keys::engineOf,
        engine,
        (end, batch) -> {
          if (end > followUp) {
            return;
          }
          for (KvEvent e : batch.events()) {
            if (e instanceof BlocksStored s && s.tier() == Tier.GPU) {
              for (long k : s.blockKeys()) {
                announced.add(k);
              }
            }
          }
        });
    return new Run(cached, announced);
  }

  /**
   * The first turn decodes alone (one macro pass of pure decode); the follow-up, a minute later,
   * finds the blocks its answer filled, and the engine announced them.
   */
  @Test
  void afterAMacroPass_theFollowUpHitsTheAnswersBlocks_andTheyWereAnnounced() {
    Workload w = chat(60_000_000);
    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, BS);
    long[] stored = keys.engineOf(0);
    assertThat(stored).hasSize((PROMPT + ANSWER) / BS);
    assertThat(keys.of(0)).containsExactly(java.util.Arrays.copyOf(stored, PROMPT / BS));

    Run r = run(w, keys, 256);

    assertThat(r.cachedTokens().get(1)).isEqualTo(CACHED_BLOCKS * BS);
    for (int b = 0; b < CACHED_BLOCKS; b++) {
      assertThat(r.announced()).contains(stored[b]);
    }
    assertThat(r.announced()).doesNotContain(stored[CACHED_BLOCKS]); // its last token never fed
  }

  /**
   * One sequence at a time: the follow-up waits while the first turn decodes pass by pass (no macro
   * pass while a request waits), and is admitted with the answer's blocks cached.
   */
  @Test
  void passByPass_theWaitingFollowUpHitsTheAnswersBlocks() {
    Workload w = chat(1_000);
    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, BS);

    Run r = run(w, keys, 1);

    assertThat(r.cachedTokens().get(1)).isEqualTo(CACHED_BLOCKS * BS);
  }

  /** Without a known answer nothing generated is cached: the follow-up finds the prompt only. */
  @Test
  void withoutTheAnswer_theFollowUpHitsThePromptOnly() {
    Workload known = chat(60_000_000);
    List<WorkloadRequest> stripped = new ArrayList<>();
    for (WorkloadRequest r : known.requests()) {
      stripped.add(
          new WorkloadRequest(
              r.index(),
              r.arrivalMicros(),
              r.session(),
              r.turn(),
              r.prompt(),
              r.outputLength(),
              null));
    }
    Workload w = Workload.of("chat", 7, 0, stripped);
    PromptKeys keys = PromptKeys.compute(w, LabConfig.MODEL, BS);
    assertThat(keys.engineOf(0)).isSameAs(keys.of(0));

    Run r = run(w, keys, 256);

    assertThat(r.cachedTokens().get(1)).isEqualTo(PROMPT / BS * BS);
  }

  /** A trace keyed by its block ids records no answers: one that claims one is refused. */
  @Test
  void aTraceOfWholeBlocksWithAnAnswer_isRefused() {
    Workload trace = Workload.of("trace", 7, BS, chat(60_000_000).requests());
    assertThatThrownBy(() -> PromptKeys.compute(trace, LabConfig.MODEL, BS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("generated workloads only");
  }
}
