"""Replays the first N requests of a Mooncake trace through Preble's own global scheduler.

Usage: python3 run.py PREBLE_DIR N REPLICAS TRACE [norebal]
PREBLE_DIR: the preble/ directory of a WukLab/preble checkout (8e7906a). Its tokenizer, GPU
model and message queue imports are stubbed; its prefill model is replaced by the lab's (the
Dynamo mocker polynomial, as PreblePolicy.prefillSeconds); calculate_min_load_cost returns the
replica meant instead of its position in the list (PreblePolicy's stated difference 4). Each
request's first token comes 200 ms and its end 1.1 s after its decision (45 output tokens). Prints
the chosen replica of each request; compare with PrebleDiff.java via cmp.py.
"""
import sys, types, json, heapq
import numpy as np
from datetime import datetime as _dt, timedelta
# ---- stubs for the heavy imports (not used by the scheduling logic)
def mod(name, **attrs):
    m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m; return m
class Tok:
    @staticmethod
    def from_pretrained(*a, **k): return None
mod('transformers', AutoTokenizer=Tok)
class RequestFuncOutput:
    pass
mod('benchmarks'); mod('benchmarks.benchmark_utils', RequestFuncOutput=RequestFuncOutput)
mod('benchmarks.exp_configs')
BS = 512
def prefill(n, ctx):  # the Java baseline's prefill model, n = blocks of 512 tokens
    x = n * BS
    return (4.209989e-7 * x * x + 1.518344e-2 * x + 16.50142) / 1000
mod('benchmarks.exp_configs.model_equations', LP_mistral_7b_A6000_sglang_extend_flashinfer=prefill)
mod('zmq'); mod('zmq.asyncio')
mod('sglang'); mod('sglang.srt'); mod('sglang.srt.managers'); mod('sglang.srt.managers.router')
mod('sglang.srt.managers.router.radix_cache', EvictionData=object)
NOW = [0]
BASE = _dt(2025, 1, 1)
class FakeDT(_dt):
    @classmethod
    def now(cls, tz=None): return BASE + timedelta(milliseconds=NOW[0])
sys.path.insert(0, sys.argv[1])
del sys.argv[1]
import ttft_overload_detector as tod
tod.datetime = FakeDT
import global_scheduler_with_time as g
g.datetime = FakeDT


def min_load_replica(self, leaf_node, selected_gpus):
    costs = self.histogram.current_allocation_per_gpu()
    gpus = list(selected_gpus)
    return gpus[int(np.argmin([costs[r] for r in gpus]))]


g.GlobalSchedulerWithTime.calculate_min_load_cost = min_load_replica

N = int(sys.argv[1]); R = int(sys.argv[2])
FIRST_MS, DECODE_MS = 200, 900
sched = g.GlobalSchedulerWithTime(num_nodes=R, enable_eviction=False, enable_rebalancing=(len(sys.argv) < 5))
reqs = [json.loads(l) for l in open(sys.argv[3])][:N]
events = []  # (time, seq, i, kind)
picks = []
seq = 0
def finish(i):
    r = reqs[i]
    fo = RequestFuncOutput()
    fo.runtime_selected = picks[i]; fo.tpot = DECODE_MS / 1000 / 45; fo.output_len = 45
    fo.max_new_tokens = 45; fo.ttft = FIRST_MS / 1000
    sched.finish_request(input_ids=tuple(r['hash_ids']), func_output=fo)
for i, r in enumerate(reqs):
    t = r['timestamp']
    while events and events[0][0] <= t:
        et, _, j = heapq.heappop(events); NOW[0] = et; finish(j)
    NOW[0] = t
    p = sched.runtime_selector(input_ids=tuple(r['hash_ids']), sampling_params={'max_new_tokens': 45})
    picks.append(p)
    seq += 1
    heapq.heappush(events, (t + FIRST_MS + DECODE_MS, seq, i))
print(' '.join(map(str, picks)))
