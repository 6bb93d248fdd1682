#!/usr/bin/env python3
"""What the best placement can cache of the synthetic Mooncake trace when each engine keeps its
blocks least recently used first, and the p90 of the prefill that leaves (docs/benchmarks.md,
"Many routers").

Every request goes, with no queue anywhere, to the replica holding the longest run of its leading
trace blocks (ties: the replica written least), the cache-greedy ceiling of any router: no
placement caches a prefix the caches no longer hold. Each replica is an LRU cache of CAPACITY trace
blocks (512 tokens each: 65,536 lab blocks of 16 tokens = 2,048 trace blocks); a request touches
its blocks in order. The prefill of a request's uncached tokens is priced with the simulated
engine's timing (prefill 4.209989e-7 x^2 + 1.518344e-2 x + 16.50142 ms per pass of x tokens,
8,192-token chunks: kv-tracker's EngineTiming.MOCKER). Printed per configuration: token hit rate,
p90 of the own prefill alone (queueing 0), written tokens max/mean.

Usage: python3 docs/results/router-sweep/lru_ceiling.py
"""
import collections
import json
import pathlib

TRACE = (pathlib.Path(__file__).resolve().parents[3]
         / "load-tests/src/main/resources/io/kvrouter/loadtest/traces/mooncake-synthetic.jsonl")
TRACE_BLOCK = 512
CHUNK = 8192


def prefill_ms(tokens):
    t = 0.0
    while tokens > 0:
        x = min(tokens, CHUNK)
        t += 16.50142 + 1.518344e-2 * x + 4.209989e-7 * x * x
        tokens -= x
    return t


def replay(requests, replicas, capacity, keep=lambda block: True):
    caches = [collections.OrderedDict() for _ in range(replicas)]
    written = [0] * replicas
    own, hit, total = [], 0, 0
    for r in requests:
        blocks, length = r["hash_ids"], r["input_length"]
        held = []
        for c in caches:
            n = 0
            for b in blocks:
                if b not in c:
                    break
                n += 1
            held.append(n)
        best = max(held)
        k = min((i for i in range(replicas) if held[i] == best), key=lambda i: written[i])
        cached = min(held[k] * TRACE_BLOCK, length)
        own.append(prefill_ms(length - cached))
        hit += cached
        total += length
        written[k] += length - cached
        c = caches[k]
        for b in blocks:
            if not keep(b):
                continue
            if b in c:
                c.move_to_end(b)
            else:
                c[b] = True
                if len(c) > capacity:
                    c.popitem(last=False)
    own.sort()
    return hit / total, own[int(0.9 * len(own))], max(written) / (sum(written) / replicas)


def main():
    requests = [json.loads(line) for line in TRACE.open()]
    uses = collections.Counter(b for r in requests for b in r["hash_ids"])
    rows = [
        ("8 replicas x 2,048 trace blocks, LRU", replay(requests, 8, 2048)),
        ("one cache of 16,384 trace blocks, LRU", replay(requests, 1, 16384)),
        ("8 x 2,048, blocks used once never cached", replay(requests, 8, 2048, lambda b: uses[b] > 1)),
        ("8 replicas, unlimited", replay(requests, 8, 10**9)),
    ]
    print("| caches | hit rate | p90 own prefill ms | written max/mean |")
    print("|---|---:|---:|---:|")
    for name, (hit, p90, spread) in rows:
        print(f"| {name} | {hit:.3f} | {p90:.0f} | {spread:.2f} |")


if __name__ == "__main__":
    main()
