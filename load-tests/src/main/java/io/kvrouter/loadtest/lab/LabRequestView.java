package io.kvrouter.loadtest.lab;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.protocol.keys.ExtraKeys;
import io.kvrouter.tracker.steering.Steering;
import java.util.HashSet;
import java.util.Set;

/**
 * What one policy's routers see of each request of a {@link LabSimulation}: its block keys and
 * prompt length, with or without the blocks of the image it shows ({@link #seesImages}), and the
 * ingress's adapter steering when the policy is kvrouter's.
 *
 * <p>LoRA adapters: each request runs with the adapter {@link PromptKeys} names (its keys include
 * it, as vLLM's block hashes and every peer's index do: Dynamo hashes {@code lora_name} into its
 * block hashes); kvrouter's policies also get the ingress's adapter steering ({@code SteeringRule}:
 * the replicas holding the adapter now, and the ingress's default load penalty of 4,096 tokens),
 * the peers none (llm-d's precise-prefix configuration has no LoRA scorer, {@code
 * deploy/config/epp-precise-prefix-cache-config.yaml}). The holders are the engines' loaded
 * adapters at decision time (the ingress learns them from its agents every few seconds).
 *
 * <p>Images: a request that shows one holds its placeholder tokens too (prefill counts them) and
 * runs on the engine with its image-keyed blocks ({@link PromptKeys}); its router gets those keys,
 * or the keys and length of its text alone when the policy does not see images.
 *
 * <p>Sessions: the first request of each of the workload's sessions (in arrival order) opens it, as
 * a session key the ingress's session directory has no binding for yet; kvrouter's policies are
 * told so ({@link Steering#opensSession}).
 *
 * <p>Cost: O(1) per request but {@link #steering}, O(replicas). Immutable once built (the openers
 * are never changed); reads the engines.
 *
 * @param withImages whether the policy's routers key an image's blocks with it ({@link
 *     #seesImages})
 * @param steersAdapters whether requests get the ingress's steering: their adapter's holders, and
 *     whether they open a session
 * @param openers the indexes of the requests that open a session
 * @param firstUserKeys per request, the keys of its first user message alone, for a router that
 *     keys on that message ({@link #readsFirstUserMessage}) when the workload has messages; else
 *     null
 */
record LabRequestView(
    Workload workload,
    PromptKeys keys,
    boolean withImages,
    boolean steersAdapters,
    java.util.BitSet openers,
    long[][] firstUserKeys) {

  /** The ingress's {@code kvrouter.lora.load-penalty-tokens} default. */
  static final double ADAPTER_LOAD_PENALTY_TOKENS = 4096;

  /**
   * What the routers of {@code policy} see.
   *
   * @param policy the policy's base name (without a variant such as strict mode)
   */
  static LabRequestView of(Workload workload, PromptKeys keys, String policy) {
    return new LabRequestView(
        workload,
        keys,
        seesImages(policy),
        policy.startsWith("kvrouter"),
        openers(workload),
        readsFirstUserMessage(policy) ? firstUserKeys(workload, keys) : null);
  }

  /**
   * Whether the router of {@code policy} keys a chat request on its first user message, not on the
   * prompt: KubeAI's prefix hash takes the first characters of the first message whose role is
   * {@code user} (substratusai/kubeai at 2f32ef49, {@code api/openai/v1/chat_completions.go},
   * {@code ChatCompletionRequest.Prefix}), system prompt left out. Where the workload has no
   * message boundaries (a token trace, or a prompt sent as one text) it gets the prompt's keys, as
   * KubeAI hashes a completion's prompt.
   */
  static boolean readsFirstUserMessage(String policy) {
    return policy.equals("chwbl");
  }

  /**
   * The keys of each request's first user message ({@link Workload#firstUserSegment}) as a prompt
   * of its own, keyed with the request's adapter as its prompt is (KubeAI hashes the adapter's name
   * and the prefix together), or null when the workload has no messages; a request with fewer
   * segments keeps its prompt's keys.
   */
  static long[][] firstUserKeys(Workload workload, PromptKeys keys) {
    int segment = workload.firstUserSegment();
    if (segment < 0) {
      return null;
    }
    long[][] out = new long[workload.size()][];
    for (int i = 0; i < workload.size(); i++) {
      var prompt = workload.get(i).prompt();
      if (prompt.segmentCount() <= segment) {
        out[i] = keys.textOf(i);
        continue;
      }
      int start = 0;
      for (int s = 0; s < segment; s++) {
        start += prompt.segmentLength(s);
      }
      int[] tokens = prompt.prefix(start + prompt.segmentLength(segment));
      String adapter = keys.adapter(i);
      out[i] =
          keys.blockKeys()
              .keys(
                  java.util.Arrays.copyOfRange(tokens, start, tokens.length),
                  adapter == null ? ExtraKeys.NONE : ExtraKeys.of(adapter, null));
    }
    return out;
  }

  /** The first request of each session, in arrival order. */
  static java.util.BitSet openers(Workload workload) {
    java.util.BitSet out = new java.util.BitSet(workload.size());
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < workload.size(); i++) {
      String session = workload.get(i).session();
      if (session != null && !session.isEmpty() && seen.add(session)) {
        out.set(i);
      }
    }
    return out;
  }

  /**
   * Whether the router of {@code policy} (its base name) tells images apart, as it ships. kvrouter
   * keys them as the engine does (the ingress's {@code MediaPrompt}). Dynamo's KV router takes the
   * engine's {@code mm_hash} per block in its multimodal router worker ({@code block_mm_infos},
   * ai-dynamo/dynamo {@code examples/backends/vllm/mm_router_worker/README.md}). llm-d's indexer
   * folds the engine's multimodal hashes into its block keys, from the events' {@code extra_keys}
   * and, for a request, from the placeholders of the tokenized prompt (llm-d/llm-d-kv-cache at
   * 7be76e11, {@code docs/architecture.md}, "Multimodal, LoRA, and Hybrid Attention"; {@code
   * pkg/kvcache/kvblock/extra_keys.go}). TGI's kvrouter inserts the whole request body, image URL
   * included, into its trie ({@code kvrouter/src/lib.rs}). The others see the text only: SGLang's
   * gateway routes on the text parts of a chat's messages, image parts left out (lightseekorg/smg
   * at 73da68ca, {@code crates/protocols/src/chat.rs}, {@code extract_text_for_routing} and {@code
   * MessageContent::append_text_to}), CHWBL hashes the first 100 characters of text and Preble
   * matches text tokens; they get the prompt's keys without the image ({@link PromptKeys#textOf})
   * and its text length. Round robin, random and least loaded read no keys.
   */
  static boolean seesImages(String policy) {
    return policy.startsWith("kvrouter")
        || policy.startsWith("dynamo_kv")
        || policy.startsWith("llmd_precise")
        || policy.equals("tgi_trie");
  }

  /** The keys of request {@code index} as this policy's router sees them. */
  long[] routerKeys(int index) {
    if (firstUserKeys != null) {
      return firstUserKeys[index];
    }
    return withImages ? keys.of(index) : keys.textOf(index);
  }

  /** The prompt length of request {@code index} as this policy's router sees it. */
  int routerPromptLength(int index) {
    return withImages ? promptLength(index) : Math.max(1, workload.get(index).inputLength());
  }

  /** The prompt length of request {@code index} on the engine: its text and image tokens. */
  int promptLength(int index) {
    return Math.max(1, workload.get(index).inputLength() + keys.imageTokens(index));
  }

  /**
   * The steering of request {@code index}, for kvrouter's policies: when it names an adapter, the
   * live engines that hold it now; whether it opens a session.
   */
  Steering steering(int index, LabEngine[] engines, boolean[] dead) {
    return steering(index, engines, dead, null, openers.get(index), 0);
  }

  /**
   * The steering of request {@code index} as {@link #steering(int, LabEngine[], boolean[])} says,
   * but with its session's binding as the ingress's session router found it ({@link LabSessions}):
   * bound to {@code boundReplica} (null: none) with {@code affinityBonusTokens}, opening its
   * session or not, built as the ingress's {@code SteeringSettings} builds it.
   */
  Steering steering(
      int index,
      LabEngine[] engines,
      boolean[] dead,
      String boundReplica,
      boolean opens,
      double affinityBonusTokens) {
    if (!steersAdapters) {
      return Steering.NONE;
    }
    String adapter = keys.adapter(index);
    if (adapter == null && boundReplica == null) {
      return opens ? Steering.OPENS_SESSION : Steering.NONE;
    }
    if (adapter == null) {
      return new Steering(boundReplica, affinityBonusTokens, 0, null, null, 0, opens);
    }
    Set<String> holders = new HashSet<>();
    for (LabEngine e : engines) {
      if (!dead[e.replica()] && e.holdsAdapter(adapter)) {
        holders.add(e.replicaId());
      }
    }
    return new Steering(
        boundReplica, affinityBonusTokens, 0, null, holders, ADAPTER_LOAD_PENALTY_TOKENS, opens);
  }
}
