package io.kvrouter.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.keys.SpeculativeDecoding;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * The alignment probe's last step: whether the engine reuses a cached prefix as the router's
 * speculative-decoding method for the model predicts. Speculative decoding leaves block hashes and
 * KV events alone, so the keys cannot tell; only what the engine reuses can. vLLM with an
 * EAGLE-style method (EAGLE, EAGLE-3, MTP) drops the last matched block of every cache hit and
 * recomputes it for the drafter ({@link SpeculativeDecoding}); a router that does not know it
 * predicts one block too many on every hit, and one that assumes it on an engine that does not drop
 * predicts one too few.
 *
 * <p>How: once the probe prompt's blocks are stored, the prompt is sent again one token longer (so
 * the engine's cap of recomputing the prompt's last token does not bind), and the engine's {@code
 * usage.prompt_tokens_details.cached_tokens} is compared with what the router's method predicts for
 * the blocks the engine announced, and with what the opposite rule would predict:
 *
 * <ul>
 *   <li>equal to the router's prediction: aligned;
 *   <li>equal to the opposite rule's: <b>speculative decoding</b>, naming {@code
 *       kvrouter.models."m".speculative-method} and the value to set;
 *   <li>no cached tokens reported (vLLM without {@code --enable-prompt-tokens-details}), or a count
 *       neither rule gives (a block evicted in between): aligned, with the check noted as not made.
 * </ul>
 *
 * <p>Thread-safe (immutable); one request per {@link #run}.
 */
final class SpeculativeProbe {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String model;
  private final int blockSize;
  private final SpeculativeDecoding router;
  private final EngineProbe engine;
  private final Duration timeout;

  /**
   * @param router the router's method for {@code model}
   */
  SpeculativeProbe(
      String model,
      int blockSize,
      SpeculativeDecoding router,
      EngineProbe engine,
      Duration timeout) {
    this.model = model;
    this.blockSize = blockSize;
    this.router = router;
    this.engine = engine;
    this.timeout = timeout;
  }

  /**
   * Sends {@code repeat} and judges the engine's reuse of the blocks {@code stored} announced for
   * the first probe prompt. Completes (never exceptionally) once the engine answered or failed.
   */
  CompletableFuture<AlignmentProbe.Result> run(
      EngineEvent.BlockStored stored, AlignmentProbe.Prompt repeat) {
    int held = heldBlocks(stored, repeat.routerTokens());
    return engine
        .complete(repeat.json(), timeout)
        .toCompletableFuture()
        .handle(
            (r, e) ->
                e != null || r.statusCode() != 200
                    ? unchecked("the engine did not answer the repeated probe")
                    : judge(cachedTokens(r.body()), held, repeat.routerTokens().length));
  }

  /** The verdict for an engine that reported {@code reported} cached tokens of {@code tokens}. */
  AlignmentProbe.Result judge(int reported, int held, int tokens) {
    int predicted = router.reusableBlocks(held, tokens, blockSize) * blockSize;
    SpeculativeDecoding opposite =
        router.dropsLastBlock() ? SpeculativeDecoding.NONE : SpeculativeDecoding.of("eagle");
    int otherwise = opposite.reusableBlocks(held, tokens, blockSize) * blockSize;
    if (reported < 0) {
      return unchecked(
          "the engine reports no cached_tokens (vLLM: start it with"
              + " --enable-prompt-tokens-details)");
    }
    if (reported == predicted) {
      return new AlignmentProbe.Result(AlignmentProbe.Outcome.ALIGNED, "", blockSize);
    }
    if (reported != otherwise) {
      return unchecked(
          String.format(
              "the engine reused %d tokens of %d held, where the router predicts %d",
              reported, held * blockSize, predicted));
    }
    String key = SpeculativeDecoding.settingKey(model);
    String fix =
        router.dropsLastBlock()
            ? String.format(
                "the engine does not recompute the last matched block, as vLLM with"
                    + " speculative method %s would (set %s = none, or start the engine with"
                    + " that method)",
                router, key)
            : String.format(
                "the engine recomputes the last matched block, as vLLM does with EAGLE, EAGLE-3"
                    + " or MTP speculative decoding (set %s to the engine's --speculative-config"
                    + " method, e.g. eagle)",
                key);
    return new AlignmentProbe.Result(
        AlignmentProbe.Outcome.SPECULATIVE,
        String.format(
            "speculative decoding: asked again for the probe prompt, the engine reused %d cached"
                + " tokens where the router, with %s = %s, predicts %d: %s",
            reported, key, router, predicted, fix),
        blockSize);
  }

  /**
   * The leading blocks of {@code tokens} the engine announced in {@code stored} (its first
   * BlockStored for the probe prompt, whose blocks are the prompt's).
   */
  private int heldBlocks(EngineEvent.BlockStored stored, int[] tokens) {
    int[] ids = stored.tokenIds();
    int n = 0;
    while ((n + 1) * blockSize <= Math.min(ids.length, tokens.length)
        && Arrays.equals(
            ids, n * blockSize, (n + 1) * blockSize, tokens, n * blockSize, (n + 1) * blockSize)) {
      n++;
    }
    return n;
  }

  /** {@code usage.prompt_tokens_details.cached_tokens} of a completion's body, -1 when absent. */
  static int cachedTokens(String body) {
    try {
      JsonNode n = JSON.readTree(body).path("usage").path("prompt_tokens_details");
      return n.path("cached_tokens").isNumber() ? n.path("cached_tokens").asInt() : -1;
    } catch (java.io.IOException | RuntimeException notJson) {
      return -1;
    }
  }

  private AlignmentProbe.Result unchecked(String why) {
    return new AlignmentProbe.Result(
        AlignmentProbe.Outcome.ALIGNED, "speculative decoding unchecked: " + why, blockSize);
  }
}
