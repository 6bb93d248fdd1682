#!/usr/bin/env python3
"""How many prompt tokens any router could find cached on the Mooncake conversation trace, and
the p90 TTFT that leaves, if each request computed its uncached prompt alone on a replica.

Run from the repository's root:
  python3 docs/results/lab-conversation-bounds-2026-12-05/bounds.py [TRACE]
TRACE is another trace in the same format (default: the bundled conversation trace); the p90
columns assume the lab's engines.

Each request lists the ids of its prompt's 512-token blocks, in order. A prompt can reuse only a
prefix of them, and a partial last block never matches (the next turn has a new id there), but it
still takes room: the engines hold it as (length mod 512) / 16 blocks of 16 tokens. Capacity is
counted in 16-token blocks: 8 replicas x 65,536, the README's headline lab. LRU caches touch a
prompt's blocks from last to first, so a prefix's tail is evicted before its head, as vLLM does.
Compute time: the Dynamo mocker's prefill polynomial the lab's engines use (MockerTimingModel), in
chunks of 8,192 tokens (max_num_batched_tokens), plus, on a replica that is also decoding, the
decode term at the lab's KV usage of about 0.02 (6.8 ms a pass). Hit rates use the engines'
measure: at most (length - 1) // 16 blocks of a prompt count as cached.

The first table is caches alone. The next two split the replicas in two groups and send each new
prompt to one of them: by an oracle (whether its conversation has a later turn) and by what a
router can know (whether it has seen the conversation before), both held to the issue's load line.
The last gives how well what a router sees of a prompt predicts a later turn.
"""
import heapq
import json
import sys
from collections import OrderedDict, defaultdict

TRACE = sys.argv[1] if len(sys.argv) > 1 else (
    "load-tests/src/main/resources/io/kvrouter/loadtest/traces/mooncake-conversation.jsonl")
UNIT = 512
BLOCK = 16
REPLICAS = 8
BLOCKS_PER_REPLICA = 65536
CHUNK = 8192
DECODE_MS = -25.74 * 0.02**2 + 54.01 * 0.02 + 5.74

reqs = [json.loads(line) for line in open(TRACE)]
lengths = [r["input_length"] for r in reqs]
# Per request, its blocks in order as (key, size in 16-token blocks); a partial last one is unique.
items = []
for i, r in enumerate(reqs):
    full = r["input_length"] // UNIT
    it = [(h, UNIT // BLOCK) for h in r["hash_ids"][:full]]
    rest = (r["input_length"] % UNIT) // BLOCK
    if rest:
        it.append((("partial", i), rest))
    items.append(it)


def prefill_ms(x):
    return 0.0 if x <= 0 else 4.209989e-7 * x * x + 1.518344e-2 * x + 16.50142


def alone_ms(uncached, decoding):
    t, x = 0.0, max(1, uncached)
    while x > 0:
        c = min(CHUNK, x)
        t += prefill_ms(c) + (DECODE_MS if decoding else 0.0)
        x -= c
    return t


def matched(cache, it):
    """Leading 16-token blocks of the prompt held (partial last blocks never match)."""
    n = 0
    for key, size in it:
        if key not in cache or size != UNIT // BLOCK:
            break
        n += size
    return n


def report(name, cached_blocks, more=""):
    cached = [min(n, (length - 1) // BLOCK) * BLOCK for n, length in zip(cached_blocks, lengths)]
    hit = sum(cached) / sum(lengths)
    floors = []
    for decoding in (False, True):
        v = sorted(alone_ms(length - c, decoding) for c, length in zip(cached, lengths))
        floors.append(v[int(0.9 * len(v))])
    print(f"| {name} | {hit:.4f} | {floors[0]:.0f} | {floors[1]:.0f} |{more}")


class Lru:
    def __init__(self, capacity):
        self.capacity, self.size, self.held = capacity, 0, OrderedDict()

    def __contains__(self, key):
        return key in self.held

    def admit(self, it):
        for key, size in reversed(it):
            if key in self.held:
                self.held.move_to_end(key)
            else:
                self.held[key] = size
                self.size += size
        while self.size > self.capacity:
            _, size = self.held.popitem(last=False)
            self.size -= size


def unlimited():
    seen, out = set(), []
    for it in items:
        out.append(matched(seen, it))
        seen.update(key for key, _ in it)
    return out


def pooled_lru(capacity):
    """One LRU cache with every replica's capacity: nothing held twice."""
    cache, out = Lru(capacity), []
    for it in items:
        out.append(matched(cache, it))
        cache.admit(it)
    return out


def pooled_belady(capacity):
    """The same pooled cache evicting the block used farthest in the future (Belady's optimum)."""
    uses = defaultdict(list)
    for i, it in enumerate(items):
        for key, _ in it:
            uses[key].append(i)
    pos = defaultdict(int)
    held, heap, size, out = {}, [], 0, []
    for i, it in enumerate(items):
        out.append(matched(held, it))
        for key, blocks in it:
            u, p = uses[key], pos[key]
            while p < len(u) and u[p] <= i:
                p += 1
            pos[key] = p
            nxt = u[p] if p < len(u) else float("inf")
            if key not in held:
                size += blocks
            held[key] = (nxt, blocks)
            heapq.heappush(heap, (-nxt, str(key), key))
        while size > capacity:
            nxt, _, key = heapq.heappop(heap)
            if key in held and held[key][0] == -nxt:
                size -= held.pop(key)[1]
    return out


def full_keys(it):
    return [key for key, size in it if size == UNIT // BLOCK]


def has_later_turn():
    """The oracle: whether the conversation of request i has a request after i. A conversation is
    the prompts sharing a second block (every prompt of the conversation trace opens with the same
    first one)."""
    last = {}
    for i, it in enumerate(items):
        full = full_keys(it)
        if len(full) > 1:
            last[full[1]] = i
    return lambda i, full, seen: len(full) > 1 and last[full[1]] > i


def seen_before(i, full, seen):
    """What a router can know: whether the conversation was seen before (a ghost list, as ARC
    keeps), though no replica holds it any longer."""
    return len(full) > 1 and full[1] in seen


def split(replicas, capacity, keep, most, goes_on):
    """Separate LRU replicas, split in two groups. A prompt no replica holds more than the opening
    block of goes to the least written of the first `keep` replicas if goes_on says its
    conversation goes on, else to the least written of the rest, so that what the conversations
    reuse is not evicted for what nobody will; a replica more than `most` times the mean written
    gives way to the least written of all. A prompt with a cached prefix goes where most of it is,
    as sticky() does. Returns the cached blocks and the load max/mean (uncached prompt per replica)."""
    caches, written, out, seen = [Lru(capacity) for _ in range(replicas)], [0] * replicas, [], set()
    for i, it in enumerate(items):
        m = [matched(c, it) for c in caches]
        best = max(range(replicas), key=lambda p: (m[p] if m[p] > UNIT // BLOCK else 0, -written[p]))
        full = full_keys(it)
        if m[best] <= UNIT // BLOCK:
            group = range(keep) if goes_on(i, full, seen) else range(keep, replicas)
            best = min(group, key=lambda p: written[p])
            if written[best] > most * sum(written) / replicas:
                best = min(range(replicas), key=lambda p: written[p])
        out.append(m[best])
        written[best] += sum(size for _, size in it) - m[best]
        caches[best].admit(it)
        seen.update(full)
    return out, max(written) / (sum(written) / replicas)


def sticky(replicas, capacity):
    """Separate LRU replicas; each request goes where most of its prompt is (more than the one
    block every prompt opens with), else to the replica that has computed the least; no queues:
    split() with one group."""
    return split(replicas, capacity, 0, float("inf"), lambda i, full, seen: False)[0]


def signals(oracle):
    """How well what a router sees predicts a later turn: the share of prompts whose conversation
    goes on, by whether the prompt opens it (its second block never seen) and by length."""
    seen, rows = set(), defaultdict(lambda: [0, 0])
    bounds = (2000, 5000, 10000, 20000, 50000)
    for i, it in enumerate(items):
        full = full_keys(it)
        if len(full) > 1:
            kind = "continues one" if full[1] in seen else "opens one"
            size = next((f"< {b:,}" for b in bounds if lengths[i] < b), f">= {bounds[-1]:,}")
            for key in ((kind, "all"), (kind, size)):
                rows[key][0] += 1
                rows[key][1] += oracle(i, full, seen)
        seen.update(full)
    print("| prompt | tokens | prompts | share whose conversation goes on |")
    print("|---|---|---:|---:|")
    order = ["all"] + [f"< {b:,}" for b in bounds] + [f">= {bounds[-1]:,}"]
    for (kind, size), (n, on) in sorted(rows.items(), key=lambda kv: (kv[0][0] == "continues one",
                                                                       order.index(kv[0][1]))):
        print(f"| {kind} | {size} | {n} | {on / n:.2f} |")


pool = REPLICAS * BLOCKS_PER_REPLICA
print("| cache | hit rate | p90 of compute alone, idle (ms) | the same, decoding (ms) |")
print("|---|---:|---:|---:|")
report("unlimited", unlimited())
report("8 x 65,536 blocks pooled, Belady's eviction", pooled_belady(pool))
report("8 x 65,536 blocks pooled, LRU", pooled_lru(pool))
report("8 replicas of 65,536 blocks, LRU, each request where most of its prompt is",
       sticky(REPLICAS, BLOCKS_PER_REPLICA))
report("one replica of 65,536 blocks, LRU", pooled_lru(BLOCKS_PER_REPLICA))
oracle = has_later_turn()
for title, goes_on in (("A router told which conversations go on", oracle),
                       ("A router that knows which conversations it has seen before", seen_before)):
    print()
    print(f"{title}, held to a load max/mean of at most 1.3:")
    print()
    print("| prompts said to go on start on | hit rate | p90 of compute alone, idle (ms) "
          "| the same, decoding (ms) | load max/mean |")
    print("|---|---:|---:|---:|---:|")
    for keep in range(1, REPLICAS):
        cached, spread = split(REPLICAS, BLOCKS_PER_REPLICA, keep, 1.3, goes_on)
        group = "1 replica" if keep == 1 else f"{keep} replicas"
        report(f"{group}, the others on the other {REPLICAS - keep}", cached,
               f" {spread:.2f} |")
    if goes_on is oracle:
        for keep in (REPLICAS - 2, REPLICAS - 1):
            cached, spread = split(REPLICAS, BLOCKS_PER_REPLICA, keep, float("inf"), goes_on)
            report(f"{keep} replicas, the others on the other {REPLICAS - keep}, load not held",
                   cached, f" {spread:.2f} |")
print()
print("What a router sees of a prompt, against whether its conversation goes on:")
print()
signals(oracle)
