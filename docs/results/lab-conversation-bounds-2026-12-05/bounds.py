#!/usr/bin/env python3
"""How many prompt tokens any router could find cached on the Mooncake conversation trace, and
the p90 TTFT that leaves, if each request computed its uncached prompt alone on a replica.

Run from the repository's root: python3 docs/results/lab-conversation-bounds-2026-12-05/bounds.py

The trace is the one the lab bundles (load-tests/.../traces/mooncake-conversation.jsonl): each
request lists the ids of its prompt's 512-token blocks, in order; a prompt can reuse only a prefix
of them, and a partial last block never matches. Capacity: 8 replicas x 65,536 blocks x 16 tokens,
the README's headline lab. Compute time: the Dynamo mocker's prefill polynomial the lab's engines
use (MockerTimingModel), in chunks of 8,192 tokens (max_num_batched_tokens), plus, on a replica
that is also decoding, the decode term at the lab's KV usage of about 0.02 (6.8 ms a pass).
"""
import heapq
import json
from collections import OrderedDict, defaultdict

TRACE = "load-tests/src/main/resources/io/kvrouter/loadtest/traces/mooncake-conversation.jsonl"
UNIT = 512
REPLICAS = 8
UNITS_PER_REPLICA = 65536 * 16 // UNIT
CHUNK = 8192
DECODE_MS = -25.74 * 0.02**2 + 54.01 * 0.02 + 5.74

reqs = [json.loads(line) for line in open(TRACE)]
units = [r["hash_ids"][: r["input_length"] // UNIT] for r in reqs]


def prefill_ms(x):
    return 0.0 if x <= 0 else 4.209989e-7 * x * x + 1.518344e-2 * x + 16.50142


def alone_ms(uncached, decoding):
    t, x = 0.0, max(1, uncached)
    while x > 0:
        c = min(CHUNK, x)
        t += prefill_ms(c) + (DECODE_MS if decoding else 0.0)
        x -= c
    return t


def matched(cache, ids):
    n = 0
    for h in ids:
        if h not in cache:
            break
        n += 1
    return n


def report(name, cached_units):
    total = sum(r["input_length"] for r in reqs)
    hit = sum(n * UNIT for n in cached_units) / total
    floors = []
    for decoding in (False, True):
        v = sorted(alone_ms(r["input_length"] - n * UNIT, decoding) for r, n in zip(reqs, cached_units))
        floors.append(v[int(0.9 * len(v))])
    print(f"| {name} | {hit:.4f} | {floors[0]:.0f} | {floors[1]:.0f} |")


def unlimited():
    seen, out = set(), []
    for ids in units:
        out.append(matched(seen, ids))
        seen.update(ids)
    return out


def lru(capacity):
    """One LRU cache of the given units: every replica's capacity pooled, nothing duplicated."""
    cache, out = OrderedDict(), []
    for ids in units:
        out.append(matched(cache, ids))
        for h in ids:
            cache[h] = True
            cache.move_to_end(h)
        while len(cache) > capacity:
            cache.popitem(last=False)
    return out


def belady(capacity):
    """The same pooled cache evicting the block used farthest in the future (Belady's optimum)."""
    uses = defaultdict(list)
    for i, ids in enumerate(units):
        for h in ids:
            uses[h].append(i)
    pos = defaultdict(int)
    cache, heap, out = {}, [], []
    for i, ids in enumerate(units):
        out.append(matched(cache, ids))
        for h in ids:
            u, p = uses[h], pos[h]
            while p < len(u) and u[p] <= i:
                p += 1
            pos[h] = p
            nxt = u[p] if p < len(u) else float("inf")
            cache[h] = nxt
            heapq.heappush(heap, (-nxt, h))
        while len(cache) > capacity:
            nxt, h = heapq.heappop(heap)
            if cache.get(h) == -nxt:
                del cache[h]
    return out


def sticky(replicas, capacity):
    """Separate LRU replicas; each request goes where most of its prompt is (more than the block
    every prompt opens with), else to the replica that has computed the least; queues ignored."""
    caches, written, out = [OrderedDict() for _ in range(replicas)], [0] * replicas, []
    for ids in units:
        m = [matched(c, ids) for c in caches]
        m = [n if n > 1 else 0 for n in m]
        best = max(range(replicas), key=lambda p: (m[p], -written[p]))
        c = caches[best]
        n = matched(c, ids)
        out.append(n)
        written[best] += len(ids) - n
        for h in ids:
            c[h] = True
            c.move_to_end(h)
        while len(c) > capacity:
            c.popitem(last=False)
    return out


print("| cache | hit rate | p90 of compute alone, idle (ms) | the same, decoding (ms) |")
print("|---|---:|---:|---:|")
report("unlimited", unlimited())
report("8 x 65,536 blocks pooled, Belady's eviction", belady(REPLICAS * UNITS_PER_REPLICA))
report("8 x 65,536 blocks pooled, LRU", lru(REPLICAS * UNITS_PER_REPLICA))
report("8 replicas of 65,536 blocks, LRU, each request where most of its prompt is", sticky(REPLICAS, UNITS_PER_REPLICA))
report("one replica of 65,536 blocks, LRU", lru(UNITS_PER_REPLICA))
