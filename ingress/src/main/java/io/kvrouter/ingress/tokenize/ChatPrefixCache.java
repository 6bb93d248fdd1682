package io.kvrouter.ingress.tokenize;

import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import net.openhft.hashing.LongHashFunction;

/**
 * Token ids of rendered chat prompts, re-using the tokens of the conversation's history: a new turn
 * tokenizes only what is new. The ids are always those of tokenizing the whole rendered text
 * ({@code tokenizer.encode(text, false)}); only the work differs.
 *
 * <p><b>Contract.</b> {@link #encode} splits the rendered text at <em>turn boundaries</em>: a
 * position where the template's turn marker starts ({@link ChatTemplate#turnMarker()}, {@code
 * <|im_start|>} for ChatML and Qwen), right after a line break that follows a non-space character.
 * Tokenizing the text before and after a turn boundary separately gives the same ids as tokenizing
 * it whole, because:
 *
 * <ul>
 *   <li>Hugging Face tokenizers split the text at added special tokens before anything else runs,
 *       and normalise and pre-tokenize each piece alone, so a marker that encodes to one special
 *       token is a boundary by construction (checked per model at start-up, together with a probe
 *       that rules out tokenizers which add a prefix space to every piece);
 *   <li>tiktoken's patterns (o200k, cl100k, p50k, r50k) end a piece at a line break that follows
 *       {@code >} and precedes {@code <}: the break is either the tail of the punctuation piece
 *       ({@code [\r\n/]*} in o200k) or a white-space piece of its own, and no alternative looks
 *       behind; nothing after the break reaches back.
 * </ul>
 *
 * {@code ChatPrefixCachePropertiesTest} checks the equality on random conversations, for ChatML and
 * the Qwen3 template, with tiktoken and the Qwen3 tokenizer.
 *
 * <p>The cache maps a text prefix ending at a turn boundary (identified by the model, its length
 * and a 64-bit hash chained over its turns, with a seed drawn per process) to its token ids. Each
 * request looks up its boundaries from the last back, tokenizes from the longest cached prefix to
 * its last boundary, stores that prefix (dropping the shorter entry it extended: the conversation
 * moved on), and tokenizes the tail (the generation prompt) alone. It also stores the prefix that
 * ends with the prompt's leading system turns ({@link #systemEnd}: the system messages and the tool
 * definitions ChatML and Qwen render into them), and never drops it for a longer one, so requests
 * that share a system prompt but not their history tokenize only what follows it. That prefix ends
 * at a turn boundary like any other, so the split there is exact by the same rule; a template that
 * writes the system prompt into the first user turn has no such boundary, and gets no such entry. A
 * collision of the hash would give a request wrong ids for routing and counting; the prompt sent to
 * the engine is never built from them (chat requests are forwarded as messages).
 *
 * <p><b>Cost.</b> Per request: one pass of XXH3 over the text plus a marker search, about a
 * microsecond per 10 KB, and the tokenization of the new turns only. Memory: 4 bytes per cached
 * token plus about 100 bytes per entry, two entries per conversation with a system prompt (its
 * latest prefix, and its system prompt, shared with every other request that has it), bounded by
 * {@code maxBytes} (least recently used entries go first). Thread-safe: lookups and updates take
 * the cache's lock briefly; tokenization runs outside it.
 */
public final class ChatPrefixCache {

  private static final int ENTRY_OVERHEAD = 96;

  /** The role that follows the marker in a system turn. */
  private static final String SYSTEM_ROLE = "system\n";

  private record Key(String model, int length, long hash) {}

  private final long maxBytes;
  private final LongHashFunction xx3 = LongHashFunction.xx3(ThreadLocalRandom.current().nextLong());
  private final Map<String, Boolean> splittable = new HashMap<>();
  private final LinkedHashMap<Key, int[]> entries = new LinkedHashMap<>(64, 0.75f, true);
  private long bytes;
  private long hits;
  private long misses;

  /**
   * A cache of at most {@code maxBytes} for the models of {@code registry}; 0 turns caching off.
   * Checks once per model that its template has a turn marker its tokenizer splits at.
   */
  public ChatPrefixCache(TokenizerRegistry registry, long maxBytes) {
    if (maxBytes < 0) {
      throw new IllegalArgumentException("maxBytes must be >= 0, got " + maxBytes);
    }
    this.maxBytes = maxBytes;
    for (String name : registry.modelNames()) {
      splittable.put(name, splitsAtMarker(registry.get(name)));
    }
  }

  /**
   * True when {@code model}'s tokenizer tokenizes text split at its template's turn marker as the
   * whole text: tiktoken always (see the class comment), a Hugging Face tokenizer when the marker
   * is one token and probes split at it agree with the whole.
   */
  static boolean splitsAtMarker(ModelTokenizer model) {
    String marker = model.chatTemplate().turnMarker();
    if (marker == null
        || marker.isEmpty()
        || Character.isLetterOrDigit(marker.charAt(0))
        || Character.isWhitespace(marker.charAt(0))) {
      return false;
    }
    PromptTokenizer t = model.tokenizer();
    if (t instanceof TiktokenPromptTokenizer) {
      return true;
    }
    if (t.encode(marker, false).length != 1) {
      return false;
    }
    for (String[] probe :
        new String[][] {
          {"x<|a|>\n", marker + "user\n hi  there\n"}, {"é 1\n", marker + "a"}, {"\n", marker}
        }) {
      int[] whole = t.encode(probe[0] + probe[1], false);
      int[] parts = concat(t.encode(probe[0], false), t.encode(probe[1], false));
      if (!Arrays.equals(whole, parts)) {
        return false;
      }
    }
    return true;
  }

  /** The ids of {@code text}, a chat prompt {@code model}'s template rendered. */
  public int[] encode(ModelTokenizer model, String text) {
    return lookup(model, text).finish();
  }

  /**
   * What the cache holds of {@code text} (a chat prompt {@code model}'s template rendered): one
   * pass of hashing and the lookup, without tokenizing; {@link Lookup#finish} tokenizes the rest.
   */
  public Lookup lookup(ModelTokenizer model, String text) {
    String marker = model.chatTemplate().turnMarker();
    if (maxBytes == 0 || !Boolean.TRUE.equals(splittable.get(model.name()))) {
      return new Lookup(model, text, null, null, -1, null);
    }
    int[] bounds = boundaries(text, marker);
    if (bounds.length == 0) {
      return new Lookup(model, text, null, null, -1, null);
    }
    long[] hashes = new long[bounds.length];
    long h = 0;
    int from = 0;
    for (int k = 0; k < bounds.length; k++) {
      h = chain(h, xx3.hashChars(text, from, bounds[k] - from));
      hashes[k] = h;
      from = bounds[k];
    }
    int hit = -1;
    int[] cached = null;
    synchronized (this) {
      for (int k = bounds.length - 1; k >= 0 && cached == null; k--) {
        cached = entries.get(new Key(model.name(), bounds[k], hashes[k]));
        hit = cached == null ? -1 : k;
      }
      if (cached == null) {
        misses++;
      } else {
        hits++;
      }
    }
    return new Lookup(model, text, bounds, hashes, hit, cached);
  }

  /**
   * A chat prompt's longest cached prefix ending at a turn boundary, and the tokenizing of the rest
   * ({@link #finish}, once, on any thread).
   */
  public final class Lookup {
    private final ModelTokenizer model;
    private final String text;
    private final int[] bounds;
    private final long[] hashes;
    private final int hit;
    private final int[] cached;

    private Lookup(
        ModelTokenizer model, String text, int[] bounds, long[] hashes, int hit, int[] cached) {
      this.model = model;
      this.text = text;
      this.bounds = bounds;
      this.hashes = hashes;
      this.hit = hit;
      this.cached = cached;
    }

    /** The chars {@link #finish} tokenizes: those after the cached prefix. */
    public int uncachedChars() {
      return hit < 0 ? text.length() : text.length() - bounds[hit];
    }

    /** The ids of the whole text: the cached prefix's, then the rest tokenized and stored. */
    public int[] finish() {
      PromptTokenizer tokenizer = model.tokenizer();
      if (bounds == null) {
        return tokenizer.encode(text, false);
      }
      String marker = model.chatTemplate().turnMarker();
      int last = bounds.length - 1;
      int start = hit < 0 ? 0 : bounds[hit];
      int[] prefix = cached == null ? new int[0] : cached;
      if (hit < last) {
        int system = systemEnd(text, marker, bounds);
        if (system > hit && system < last) {
          // the shared system prompt, kept beside the conversation for requests that share it
          prefix = concat(prefix, tokenizer.encode(text.substring(start, bounds[system]), false));
          store(new Key(model.name(), bounds[system], hashes[system]), prefix, null);
          start = bounds[system];
        }
        prefix = concat(prefix, tokenizer.encode(text.substring(start, bounds[last]), false));
        // the entry this one extends goes (the conversation moved on), unless it is a system prompt
        store(
            new Key(model.name(), bounds[last], hashes[last]),
            prefix,
            hit > system ? new Key(model.name(), bounds[hit], hashes[hit]) : null);
      }
      return concat(prefix, tokenizer.encode(text.substring(bounds[last]), false));
    }
  }

  private synchronized void store(Key key, int[] ids, Key extended) {
    long size = ENTRY_OVERHEAD + 4L * ids.length;
    if (size > maxBytes) {
      return;
    }
    if (extended != null) {
      int[] old = entries.remove(extended);
      if (old != null) {
        bytes -= ENTRY_OVERHEAD + 4L * old.length;
      }
    }
    int[] before = entries.put(key, ids);
    if (before != null) {
      bytes -= ENTRY_OVERHEAD + 4L * before.length;
    }
    bytes += size;
    var it = entries.entrySet().iterator();
    while (bytes > maxBytes && it.hasNext()) {
      var eldest = it.next();
      bytes -= ENTRY_OVERHEAD + 4L * eldest.getValue().length;
      it.remove();
    }
  }

  /** Turn boundaries of {@code text}, ascending, all above 0. */
  static int[] boundaries(String text, String marker) {
    int[] out = new int[8];
    int n = 0;
    for (int p = text.indexOf(marker, 2); p >= 0; p = text.indexOf(marker, p + 1)) {
      if (text.charAt(p - 1) == '\n' && !Character.isWhitespace(text.charAt(p - 2))) {
        if (n == out.length) {
          out = Arrays.copyOf(out, 2 * n);
        }
        out[n++] = p;
      }
    }
    return Arrays.copyOf(out, n);
  }

  /**
   * The index in {@code bounds} of the boundary that ends the prompt's leading system turns (those
   * that start with the marker and the role {@code system}: the system messages and, as ChatML and
   * Qwen render them, the tool definitions), or -1 when the prompt does not start with one.
   */
  static int systemEnd(String text, String marker, int[] bounds) {
    if (!startsSystemTurn(text, 0, marker)) {
      return -1;
    }
    int k = 0;
    while (k + 1 < bounds.length && startsSystemTurn(text, bounds[k], marker)) {
      k++;
    }
    return k;
  }

  private static boolean startsSystemTurn(String text, int at, String marker) {
    return text.startsWith(marker, at) && text.startsWith(SYSTEM_ROLE, at + marker.length());
  }

  private static long chain(long h, long segment) {
    long k = Long.rotateLeft(h, 31) ^ segment;
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    return k ^ (k >>> 33);
  }

  private static int[] concat(int[] a, int[] b) {
    if (a.length == 0) {
      return b;
    }
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** Requests that found a cached prefix. */
  public synchronized long hits() {
    return hits;
  }

  /** Requests that found none. */
  public synchronized long misses() {
    return misses;
  }

  /** Bytes held (token arrays plus entry overhead). */
  public synchronized long bytes() {
    return bytes;
  }
}
