#!/usr/bin/env bash
# How long does a cold ingress take to serve at its warm latency? Starts, on loopback and in
# separate processes, one simulated vLLM engine (timing model sped up, so the engine itself costs
# almost nothing, as in overhead.sh), its replica agent and one kvrouter ingress; the moment the
# ingress is ready (/ready answers 200 and /v1/models lists the model), an open-loop bench starts
# at --rate with no warm-up of its own. Prints the TTFT p50 of every 1 s
# window of the run, the warm p50 (the median of the last 10 windows' p50s) and the cold start: the
# time from ready until a window's p50 first comes below twice the warm p50 (and from when on it
# stays there, which other load on the machine easily delays).
# With --warmup N the bench first sends N unmeasured requests one after another (its --warmup),
# which shows what warming the ingress's path before it reports ready would buy: the figure is then
# also given from the first measured request.
#
# Usage, from anywhere:  load-tests/bench/coldstart.sh [--rate 100] [--seconds 30]
#   [--max-tokens 16] [--warmup 0] [--out DIR]
# Environment: INGRESS_JAVA_OPTS (options of the ingress JVM), KEEP=1 keeps the processes running
# at the end.
# One run is one sample: the figure moves with what else the machine's cores are doing.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rate=100 seconds=30 max_tokens=16 warmup=0
out="$root/load-tests/target/coldstart"
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --max-tokens) max_tokens="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n 2,15p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

source "$here/lib.sh"
read -r p_engine p_zmq p_replay p_ingress p_icluster p_acluster < <(free_ports 6)

echo "engine :$p_engine  ingress :$p_ingress  (logs in $work)"
"${java_run[@]}" -jar "$jar" sim-engine --port "$p_engine" --speedup 1000 --num-blocks 65536 \
  --kv-events "tcp://127.0.0.1:$p_zmq" --replay "tcp://127.0.0.1:$p_replay" \
  >"$work/engine.log" 2>&1 &
pids+=($!)
"${java_run[@]}" ${INGRESS_JAVA_OPTS:-} -jar "$jar" ingress \
  --host 127.0.0.1 --port "$p_icluster" --http-host 127.0.0.1 --http-port "$p_ingress" \
  --seed-nodes "pekko://kvrouter@127.0.0.1:$p_icluster" >"$work/ingress.log" 2>&1 &
pids+=($!)
"${java_run[@]}" -jar "$jar" agent --host 127.0.0.1 --port "$p_acluster" \
  --seed-nodes "pekko://kvrouter@127.0.0.1:$p_icluster" \
  --engine-url "http://127.0.0.1:$p_engine" --kv-events "tcp://127.0.0.1:$p_zmq" \
  --replay "tcp://127.0.0.1:$p_replay" >"$work/agent.log" 2>&1 &
pids+=($!)

deadline=$((SECONDS + 300))
until curl -sf -o /dev/null "http://127.0.0.1:$p_ingress/ready" \
    && curl -sf "http://127.0.0.1:$p_ingress/v1/models" | grep -q kvrouter-demo; do
  [ $SECONDS -lt $deadline ] || { echo "ingress not ready (see $work)" >&2; exit 1; }
  sleep 0.1
done
ready_ms="$(date +%s%3N)"

"${java_run[@]}" -jar "$jar" bench --url "http://127.0.0.1:$p_ingress" --workload random \
  --rate "$rate" --requests "$((rate * seconds))" --max-tokens "$max_tokens" --warmup "$warmup" --label coldstart \
  --out "$out" >"$out/bench.log" 2>&1

python3 - "$out" "$ready_ms" <<'PY'
import csv, datetime, json, statistics, sys
out, ready_ms = sys.argv[1], int(sys.argv[2])
started = json.load(open(f"{out}/results.json"))["startedAt"]
start_ms = datetime.datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp() * 1000
windows = {}
for r in csv.DictReader(open(f"{out}/requests.csv")):
    if r["status"] == "OK" and r["ttft_ms"]:
        windows.setdefault(int(float(r["intended_ms"]) // 1000), []).append(float(r["ttft_ms"]))
p50 = {w: statistics.median(v) for w, v in sorted(windows.items())}
last = max(p50)
if last < 19:
    print("warning: under 20 windows, so the warm reference overlaps the cold start: raise --seconds")
warm = statistics.median([p50[w] for w in p50 if w > last - 10])
offset = (start_ms - ready_ms) / 1000
for w, v in p50.items():
    print(f"  {offset + w:5.1f}..{offset + w + 1:5.1f} s after ready: TTFT p50 {v:8.1f} ms")
above = [w for w in p50 if p50[w] > 2 * warm]
first_below = min((w for w in p50 if p50[w] <= 2 * warm), default=None)
stays = 0 if not above else max(above) + 1
print(f"bench started {offset:.1f} s after ready; warm TTFT p50 {warm:.1f} ms")
print(f"cold start: TTFT p50 first below 2x warm {offset + first_below:.1f} s after ready"
      f" ({first_below} s after the first measured request); below from {offset + stays:.1f} s on")
PY
