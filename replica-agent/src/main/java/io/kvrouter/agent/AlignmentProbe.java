package io.kvrouter.agent;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.keys.BlockKeys;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Checks, when the agent connects to an engine, that the router's block keys line up with the
 * engine's blocks, so that a misconfigured replica fails loudly instead of being routed on keys
 * that never match.
 *
 * <p>How it works against any vLLM-compatible engine: one completion ({@code max_tokens} 1) whose
 * prompt starts with a random nonce, so its first block is new to the engine's prefix cache and the
 * engine must announce it in a BlockStored without parent (vLLM's block pool announces every newly
 * cached full block, {@code vllm/v1/core/block_pool.py}). With a router tokenizer for the model the
 * prompt is text (the engine tokenizes it, as it does chat requests); without one it is token ids
 * (then the tokenizer is not checked). The first root BlockStored whose first block holds the
 * router's first tokens is the probe's; then:
 *
 * <ul>
 *   <li>its {@code block_size} must be the replica's (else <b>block size</b>);
 *   <li>the agent's key function must key that block as the trackers' {@link BlockKeys} keys the
 *       router's tokens (else <b>hash seed</b>: the model or seed the agent keys with is not the
 *       trackers');
 *   <li>when no root BlockStored matches within the timeout but others came, their block size or
 *       tokens name the mismatch (<b>block size</b> or <b>tokenizer</b>); when none came at all the
 *       probe is inconclusive (prefix caching or KV events off, or the engine busy elsewhere);
 *   <li>once block size and keys agree, the prompt is sent again (one token longer) and the cached
 *       tokens the engine reports for it must be those the router's speculative-decoding method
 *       predicts ({@link SpeculativeProbe}; else <b>speculative decoding</b>).
 * </ul>
 *
 * The engine's own hash function and seed ({@code PYTHONHASHSEED}, {@code
 * --prefix-caching-hash-algo}) never matter: router keys are computed from the token ids.
 *
 * <p>Thread-safe; one probe at a time per pipeline (it installs the pipeline's root watcher).
 */
public final class AlignmentProbe {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String FILLER = " the quick brown fox jumps over the lazy dog";

  /** What the probe found. */
  public enum Outcome {
    ALIGNED,
    BLOCK_SIZE,
    TOKENIZER,
    HASH_SEED,
    SPECULATIVE,
    INCONCLUSIVE
  }

  /**
   * The probe's verdict and, for anything but ALIGNED, what it saw.
   *
   * @param engineBlockSize the block size of the engine's blocks the probe judged, 0 when it saw
   *     none
   */
  public record Result(Outcome outcome, String detail, int engineBlockSize) {

    /** A verdict that saw no block of the engine's. */
    public Result(Outcome outcome, String detail) {
      this(outcome, detail, 0);
    }

    public boolean mismatch() {
      return outcome != Outcome.ALIGNED && outcome != Outcome.INCONCLUSIVE;
    }

    /** What the replica's announcement says of it: aligned, unaligned or unchecked, and why. */
    public AlignmentStatus status() {
      return switch (outcome) {
        case ALIGNED -> AlignmentStatus.ALIGNED;
        case INCONCLUSIVE -> AlignmentStatus.unchecked(detail);
        default -> AlignmentStatus.unaligned(detail);
      };
    }
  }

  /**
   * The probe's request body and the router's tokens of its prompt.
   *
   * @param text the prompt's text, or null for a prompt of token ids
   */
  record Prompt(String json, int[] routerTokens, String text) {}

  private final ReplicaSpec spec;
  private final RouterKeyFunction keys;
  private final RouterTokenizer tokenizer;
  private final AlignmentSettings settings;
  private final EngineProbe engine;

  /**
   * @param tokenizer the router's tokenizer of the replica's model, or null
   */
  public AlignmentProbe(
      ReplicaSpec spec,
      RouterKeyFunction keys,
      RouterTokenizer tokenizer,
      AlignmentSettings settings,
      EngineProbe engine) {
    this.spec = spec;
    this.keys = keys;
    this.tokenizer = tokenizer;
    this.settings = settings;
    this.engine = engine;
  }

  /**
   * Sends the probe and judges what the engine stores for it. Completes (never exceptionally)
   * within the timeout.
   */
  public CompletableFuture<Result> run(ReplicaEventPipeline pipeline, long nonce) {
    Prompt p;
    try {
      p = prompt(nonce);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(
          inconclusive("the router could not tokenize the probe prompt (" + e + ")"));
    }
    List<EngineEvent.BlockStored> roots = new CopyOnWriteArrayList<>();
    CompletableFuture<Result> done = new CompletableFuture<>();
    CompletableFuture<EngineEvent.BlockStored> stored = new CompletableFuture<>();
    CompletableFuture<Void> answered = new CompletableFuture<>();
    Consumer<EngineEvent.BlockStored> watcher =
        s -> {
          roots.add(s);
          if (firstBlockMatches(s, p.routerTokens())) {
            stored.complete(s);
            done.complete(judgeMatch(s, p.routerTokens()));
          }
        };
    pipeline.watchRoots(watcher);
    engine
        .complete(p.json(), settings.timeout())
        .whenComplete(
            (r, e) -> {
              if (e != null) {
                done.complete(inconclusive("the engine did not answer the probe (" + e + ")"));
              } else if (r.statusCode() != 200) {
                String body = r.body();
                done.complete(
                    inconclusive(
                        "the engine answered the probe "
                            + r.statusCode()
                            + ": "
                            + body.substring(0, Math.min(200, body.length()))));
              } else {
                answered.complete(null);
              }
            });
    long timeoutMillis = settings.timeout().toMillis();
    return done.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
        .exceptionally(e -> judgeWithoutMatch(roots, p.routerTokens()))
        .whenComplete((r, e) -> pipeline.unwatchRoots(watcher))
        .thenCompose(
            r ->
                r.outcome() != Outcome.ALIGNED
                    ? CompletableFuture.completedFuture(r)
                    : answered
                        .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
                        .thenCompose(
                            a ->
                                new SpeculativeProbe(
                                        spec.model(),
                                        spec.blockSize(),
                                        settings.speculative().apply(spec.model()),
                                        engine,
                                        settings.timeout())
                                    .run(stored.join(), repeat(p)))
                        .exceptionally(
                            e ->
                                new Result(
                                    Outcome.ALIGNED,
                                    "speculative decoding unchecked: the probe's first answer did"
                                        + " not come ("
                                        + e
                                        + ")",
                                    r.engineBlockSize())));
  }

  /** The prompt: text of at least {@code blocks} router blocks, or as many token ids. */
  Prompt prompt(long nonce) {
    int want = settings.blocks() * spec.blockSize();
    ObjectNode body = JSON.createObjectNode().put("model", spec.model()).put("max_tokens", 1);
    int[] tokens;
    if (tokenizer != null) {
      StringBuilder text =
          new StringBuilder("kvrouter alignment probe ")
              .append(Long.toHexString(nonce))
              .append(':');
      tokens = tokenizer.encodePrompt(text.toString());
      for (int i = 0; tokens.length < want && i < want; i++) {
        text.append(FILLER).append(' ').append(i);
        tokens = tokenizer.encodePrompt(text.toString());
      }
      body.put("prompt", text.toString());
      return new Prompt(body.toString(), tokens, text.toString());
    } else {
      SplittableRandom random = new SplittableRandom(nonce);
      tokens = new int[want];
      for (int i = 0; i < want; i++) {
        tokens[i] = 32 + random.nextInt(95); // printable ASCII: an id every vocabulary has
      }
      ArrayNode ids = body.putArray("prompt");
      for (int t : tokens) {
        ids.add(t);
      }
    }
    return new Prompt(body.toString(), tokens, null);
  }

  /**
   * {@code p} one token longer (text: a word more), so that the engine's reuse of the blocks it
   * stored for {@code p} is not capped by its rule of recomputing the prompt's last token.
   */
  Prompt repeat(Prompt p) {
    ObjectNode body = JSON.createObjectNode().put("model", spec.model()).put("max_tokens", 1);
    if (p.text() != null) {
      String text = p.text() + " again";
      body.put("prompt", text);
      return new Prompt(body.toString(), tokenizer.encodePrompt(text), text);
    }
    int[] tokens = Arrays.copyOf(p.routerTokens(), p.routerTokens().length + 1);
    tokens[tokens.length - 1] = 'a';
    ArrayNode ids = body.putArray("prompt");
    for (int t : tokens) {
      ids.add(t);
    }
    return new Prompt(body.toString(), tokens, null);
  }

  private static boolean firstBlockMatches(EngineEvent.BlockStored s, int[] router) {
    int bs = s.blockSize();
    return bs > 0
        && s.tokenIds().length >= bs
        && router.length >= bs
        && Arrays.equals(s.tokenIds(), 0, bs, router, 0, bs);
  }

  private Result judgeMatch(EngineEvent.BlockStored s, int[] router) {
    if (s.blockSize() != spec.blockSize()) {
      return blockSize(s);
    }
    int bs = spec.blockSize();
    long agentKey = keys.keys(BlocksStored.ROOT, Arrays.copyOf(s.tokenIds(), bs), bs, null)[0];
    long trackerKey = BlockKeys.of(spec.model(), bs).keys(Arrays.copyOf(router, bs))[0];
    if (agentKey != trackerKey) {
      return new Result(
          Outcome.HASH_SEED,
          String.format(
              "hash seed: the agent keys the engine's first block as %016x where the trackers key"
                  + " the same tokens as %016x (the agent's key function for model %s is not the"
                  + " trackers')",
              agentKey, trackerKey, spec.model()),
          bs);
    }
    return new Result(Outcome.ALIGNED, "", bs);
  }

  private Result judgeWithoutMatch(List<EngineEvent.BlockStored> roots, int[] router) {
    if (roots.isEmpty()) {
      return inconclusive(
          "the engine announced no new first block for the probe within "
              + settings.timeout().toMillis()
              + " ms (is prefix caching on and are KV events published?)");
    }
    EngineEvent.BlockStored s = roots.get(0);
    if (s.blockSize() != spec.blockSize()) {
      return blockSize(s);
    }
    int n = Math.min(8, spec.blockSize());
    return new Result(
        Outcome.TOKENIZER,
        String.format(
            "tokenizer: for the probe prompt the engine's first block starts %s where the router's"
                + " tokenizer gives %s (kvrouter.models.\"%s\".tokenizer must be the engine's)",
            Arrays.toString(Arrays.copyOf(s.tokenIds(), Math.min(n, s.tokenIds().length))),
            Arrays.toString(Arrays.copyOf(router, Math.min(n, router.length))),
            spec.model()),
        s.blockSize());
  }

  private Result blockSize(EngineEvent.BlockStored s) {
    return new Result(
        Outcome.BLOCK_SIZE,
        String.format(
            "block size: the engine stores blocks of %d tokens, the router keys blocks of %d (set"
                + " the agent's --block-size and kvrouter.models.\"%s\".block-size to the engine's)",
            s.blockSize(), spec.blockSize(), spec.model()),
        s.blockSize());
  }

  private static Result inconclusive(String why) {
    return new Result(Outcome.INCONCLUSIVE, why);
  }
}
