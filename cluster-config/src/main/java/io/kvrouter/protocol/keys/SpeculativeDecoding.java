package io.kvrouter.protocol.keys;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigUtil;
import java.util.Locale;
import java.util.Set;

/**
 * The speculative-decoding method a model's engines run, as the router must know it to predict how
 * much of a cached prefix the engine reuses. Chosen per model by {@code
 * kvrouter.models."<model>".speculative-method} ({@link #settingKey}); announced per replica by its
 * agent and checked by the agent's alignment probe.
 *
 * <p>Contract: block keys never change with speculative decoding in vLLM (a block is hashed from
 * its tokens, its parent and its extra keys only, and announced by the same {@code BlockStored}s);
 * what changes is the cache hit. {@link #reusableBlocks} is the number of leading blocks of a
 * prompt an engine reuses when it holds {@code matched} of them: vLLM never reuses the prompt's
 * last token (the hit is at most {@code promptTokens - 1} tokens, in whole blocks), and with an
 * EAGLE-style method ({@link #dropsLastBlock}) it drops the last matched block too, so the drafter
 * can recompute the hidden states of that block. A router that does not know it credits every hit
 * on such an engine with one block the engine recomputes.
 *
 * <p>Implementation notes, from vllm-project/vllm:
 *
 * <ul>
 *   <li>{@code vllm/v1/core/kv_cache_manager.py} at 003df296: {@code get_computed_blocks} sets
 *       {@code max_cache_hit_length = request.num_tokens - 1}, and {@code allocate_slots} caches
 *       only verified tokens (draft tokens are never hashed or announced);
 *   <li>{@code vllm/v1/core/single_type_kv_cache_manager.py} {@code
 *       FullAttentionManager.find_longest_cache_hit}, at 002f3491 ("If eagle is enabled, drop the
 *       last matched block to force recompute the last block to get the required hidden states for
 *       eagle drafting head": {@code if self.use_eagle and len(computed_blocks) > 0:
 *       computed_blocks.pop()}) and at 129ab7c6 ({@code if use_eagle and computed_blocks[0]}: one
 *       pop per group), introduced by PR #17137; at 00b08dc4 {@code kv_cache_coordinator.py}
 *       ({@code UnitaryKVCacheCoordinator}: {@code drop_eagle_block=0 in self.eagle_group_ids})
 *       decides it and it is still one block;
 *   <li>the same {@code kv_cache_coordinator.py} at 00b08dc4 caches, with multi-module MTP, only
 *       the tokens before the last {@code num_speculative_tokens - 1} ({@code
 *       num_reprefillable_tokens}): fewer tail blocks are stored, but each stored block is
 *       announced by its {@code BlockStored}, so the index follows it without a rule here;
 *   <li>{@code vllm/config/speculative.py} at 002e77c1: {@code use_eagle()} is {@code method in
 *       ("eagle", "eagle3", "mtp", "dflash", "dspark")}, and {@code use_eagle_block_drop()} that
 *       and not {@code disable_eagle_block_drop} (an engine started with that flag reads as {@link
 *       #NONE} here); model-specific MTP names ({@code deepseek_mtp}, {@code qwen3_next_mtp}, ...)
 *       are renamed {@code mtp} with a deprecation warning.
 * </ul>
 *
 * Not covered: vLLM PR #50897 (open, not merged) would key EAGLE blocks by their successor token
 * and stop the drop; SGLang with EAGLE keys its radix cache and KV events by token bigrams (Dynamo
 * PRs #6872, #10982, #11764), a different hash, not a different hit.
 *
 * <p>Immutable; thread-safe.
 *
 * @param method the engine's {@code --speculative-config} method, lower case; {@code none} without
 *     speculative decoding
 */
public record SpeculativeDecoding(String method) {

  // Before NONE: its constructor reads them.

  /** Methods whose drafter reads the target's hidden states: vLLM drops the last matched block. */
  private static final Set<String> DROPPING = Set.of("eagle", "eagle3", "mtp", "dflash", "dspark");

  /** Methods vLLM accepts that leave the cache hit alone. */
  private static final Set<String> KEEPING =
      Set.of(
          "none",
          "ngram",
          "ngram_gpu",
          "draft_model",
          "medusa",
          "mlp_speculator",
          "suffix",
          "custom_class",
          "extract_hidden_states");

  /**
   * No speculative decoding: the hit is every matched block within the prompt less its last token.
   */
  public static final SpeculativeDecoding NONE = new SpeculativeDecoding("none");

  /** The setting's key inside a model's block of {@code kvrouter.models}. */
  public static final String KEY = "speculative-method";

  /**
   * @throws IllegalArgumentException for a method vLLM does not name, listing the accepted ones
   */
  public SpeculativeDecoding {
    method = method == null || method.isBlank() ? "none" : method.trim().toLowerCase(Locale.ROOT);
    if (!DROPPING.contains(method) && !KEEPING.contains(method) && !method.endsWith("_mtp")) {
      throw new IllegalArgumentException(
          "unknown speculative method '"
              + method
              + "': one of none, eagle, eagle3, mtp, dflash, dspark (the last matched block is"
              + " recomputed), ngram, ngram_gpu, draft_model, medusa, mlp_speculator, suffix,"
              + " custom_class, extract_hidden_states");
    }
  }

  /** The method named {@code method} (blank or null: {@link #NONE}). */
  public static SpeculativeDecoding of(String method) {
    return new SpeculativeDecoding(method);
  }

  /**
   * True when the engine drops the last matched block of every prefix-cache hit (vLLM's {@code
   * use_eagle()}; MTP model types such as {@code deepseek_mtp} count as {@code mtp}).
   */
  public boolean dropsLastBlock() {
    return DROPPING.contains(method) || method.endsWith("_mtp");
  }

  /**
   * Leading blocks of a prompt of {@code promptTokens} tokens the engine reuses when it holds the
   * first {@code matched} of them: {@code min(matched, (promptTokens - 1) / blockSize)}, less one
   * when {@link #dropsLastBlock} and that is positive.
   */
  public int reusableBlocks(int matched, int promptTokens, int blockSize) {
    if (blockSize < 1) {
      throw new IllegalArgumentException("blockSize must be positive, was " + blockSize);
    }
    int hit = Math.max(0, Math.min(matched, (promptTokens - 1) / blockSize));
    return dropsLastBlock() && hit > 0 ? hit - 1 : hit;
  }

  /** The full path of the setting for {@code model}: {@code kvrouter.models."<model>".KEY}. */
  public static String settingKey(String model) {
    return "kvrouter.models." + ConfigUtil.quoteString(model) + "." + KEY;
  }

  /**
   * The setting for {@code model} in {@code config} ({@link #NONE} when it sets none).
   *
   * @throws IllegalArgumentException naming the key when its value is not a known method
   */
  public static SpeculativeDecoding forModel(Config config, String model) {
    String path = settingKey(model);
    if (!config.hasPath(path)) {
      return NONE;
    }
    try {
      return of(config.getString(path));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(path + ": " + e.getMessage(), e);
    }
  }

  @Override
  public String toString() {
    return method;
  }
}
