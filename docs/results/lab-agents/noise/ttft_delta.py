#!/usr/bin/env python3
"""Per-request TTFT differences between lab runs (results.json with programs).

ttft_delta.py A.json POLICY_A B.json POLICY_B: for every request both runs answered
(matched by request_keys, session and turn), TTFT(B) - TTFT(A) in ms; prints the count,
max, p99, p90, median, p10, p1, min (a fall is negative), and how many rose by more than 100 ms
and 1 s.
"""
import json
import sys


def ttfts(path, policy):
    for p in json.load(open(path))["policies"]:
        if p["policy"] == policy:
            g = p["programs"]
            return {k: t for k, t in zip(g["request_keys"], g["ttft_by_request_ms"]) if t >= 0}
    raise SystemExit(f"{path}: no policy {policy}")


def pct(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


a = ttfts(sys.argv[1], sys.argv[2])
b = ttfts(sys.argv[3], sys.argv[4])
d = sorted(b[k] - a[k] for k in a if k in b)
print(
    f"n={len(d)} max={d[-1]:.1f} p99={pct(d, 0.99):.1f} p90={pct(d, 0.90):.1f}"
    f" p50={pct(d, 0.50):.1f} p10={pct(d, 0.10):.1f} p1={pct(d, 0.01):.1f} min={d[0]:.1f}"
    f" >100ms={sum(x > 100 for x in d)} >1s={sum(x > 1000 for x in d)}"
)
