#!/usr/bin/env bash
# A soak: does anything grow without bound under a steady workload? Starts, on loopback and in
# separate processes, one kvrouter ingress and one agent with simulated vLLM engines, runs an
# open-loop bench of prompts that never repeat (every request adds blocks the index has never seen,
# the workload that grows an index without a budget), and every --sample seconds forces a full GC
# of the ingress (jcmd GC.run) and records its heap used after it, with the tracker's gauges from
# /metrics: index blocks, holdings and estimated bytes, predicted runs, open and detached
# reservations, holdings evicted by the budget, in-flight requests. After the bench, a cool-down
# shows whether reservations and in-flight counts return to 0. Writes samples.csv, soak.png (the
# chart, by SoakReport) and summary.md (warm-up excluded) to --out.
#
# Usage, from anywhere:  load-tests/bench/soak.sh [--minutes 5] [--rate 20] [--sample 10]
#   [--budget 2m] [--engines 2] [--num-blocks 100000] [--cooldown 30] [--out DIR]
# --budget sets kvrouter.tracker.max-index-bytes (HOCON size) below what the engines' caches hold,
# so the budget, not the engines' evictions, bounds the index; --budget 0 turns it off.
# Environment: INGRESS_JAVA_OPTS (options of the ingress JVM, e.g. -Xmx512m).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
minutes=5 rate=20 sample=10 budget=2m engines=2 num_blocks=100000 cooldown=30
out="$root/load-tests/target/soak"
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --sample) sample="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --engines) engines="$2"; shift 2 ;;
    --num-blocks) num_blocks="$2"; shift 2 ;;
    --cooldown) cooldown="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

"$root/kvrouter" --version >/dev/null   # builds the jar when a source is newer
jar="$root/distribution/target/kvrouter-all.jar"
java_run=(java -Dai.djl.offline=true -DOPT_OUT_TRACKING=true)
command -v jcmd >/dev/null || { echo "jcmd not found (a JDK's bin on PATH)" >&2; exit 1; }

mkdir -p "$out"
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

read -r p_ingress p_icluster p_acluster < <(python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
)

cat > "$work/ingress.conf" <<CONF
kvrouter.tracker.max-index-bytes = $budget
CONF

url="http://127.0.0.1:$p_ingress"
echo "ingress $url, $engines simulated engines, budget $budget (logs in $work)"
"${java_run[@]}" ${INGRESS_JAVA_OPTS:-} -jar "$jar" ingress --config "$work/ingress.conf" \
  --host 127.0.0.1 --port "$p_icluster" --http-host 127.0.0.1 --http-port "$p_ingress" \
  --seed-nodes "pekko://kvrouter@127.0.0.1:$p_icluster" >"$work/ingress.log" 2>&1 &
pids+=($!); ingress_pid=$!
"${java_run[@]}" -jar "$jar" agent --host 127.0.0.1 --port "$p_acluster" \
  --seed-nodes "pekko://kvrouter@127.0.0.1:$p_icluster" --sim "$engines" \
  --sim-http-base 0 --sim-zmq-base 0 --num-blocks "$num_blocks" --speedup 20 \
  >"$work/agent.log" 2>&1 &
pids+=($!)

deadline=$((SECONDS + 300))
until curl -sf -o /dev/null "$url/ready"; do
  [ $SECONDS -lt $deadline ] || { echo "ingress not ready (see $work)" >&2; exit 1; }
  sleep 1
done
until [ "$(curl -sf "$url/admin/replicas" | jq 'length' 2>/dev/null || echo 0)" -ge "$engines" ]; do
  [ $SECONDS -lt $deadline ] || { echo "replicas not registered (see $work)" >&2; exit 1; }
  sleep 1
done

# One gauge of the ingress's /metrics, summed over its labels (0 when absent).
gauge() { awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%.0f", s }' "$work/metrics"; }
# Heap used after a full GC, in bytes (G1's "garbage-first heap total ..K, used ..K").
heap_after_gc() {
  jcmd "$ingress_pid" GC.run >/dev/null
  jcmd "$ingress_pid" GC.heap_info | awk '/ heap / && /used/ { for (i = 1; i <= NF; i++) if ($i == "used") { v = $(i + 1); sub(/K.*/, "", v); print v * 1024; exit } }'
}
csv="$out/samples.csv"
echo "seconds,phase,heap_after_gc_bytes,index_blocks,index_holdings,index_bytes,predicted_runs,open_reservations,detached_reservations,evicted_holdings,in_flight,requests" >"$csv"
sample_once() { # elapsed phase
  curl -sf "$url/metrics" >"$work/metrics" || : >"$work/metrics"
  echo "$1,$2,$(heap_after_gc),$(gauge kvrouter_index_blocks),$(gauge kvrouter_index_holdings),$(gauge kvrouter_index_bytes),$(gauge kvrouter_predicted_runs),$(gauge kvrouter_open_reservations),$(gauge kvrouter_detached_reservations),$(gauge kvrouter_index_evicted),$(gauge kvrouter_replica_inflight),$(gauge kvrouter_requests_total)" >>"$csv"
}

seconds=$((minutes * 60))
requests=$(awk -v r="$rate" -v s="$seconds" 'BEGIN { printf "%d", r * s }')
"${java_run[@]}" -jar "$jar" bench --url "$url" --workload random --prefix-words 300 \
  --suffix-words 30 --rate "$rate" --requests "$requests" --duration "$seconds" --max-tokens 8 \
  --seed 7 --label soak --out "$out/bench" >"$out/bench.log" 2>&1 &
bench_pid=$!
pids+=($bench_pid)
start=$SECONDS
sample_once 0 load
while kill -0 "$bench_pid" 2>/dev/null; do
  sleep "$sample"
  kill -0 "$bench_pid" 2>/dev/null && sample_once $((SECONDS - start)) load
done
wait "$bench_pid" || echo "bench exited with $? (see $out/bench.log)" >&2
end=$((SECONDS + cooldown))
while [ $SECONDS -lt "$end" ]; do
  sleep "$sample"
  sample_once $((SECONDS - start)) cooldown
done

{
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) on $(nproc) cores"
  echo "command: load-tests/bench/soak.sh --minutes $minutes --rate $rate --sample $sample --budget $budget --engines $engines --num-blocks $num_blocks"
  echo "bench: $(jq -r '"\(.counts.sent) sent, \(.counts.ok) ok"' "$out/bench/results.json" 2>/dev/null || echo 'no results')"
  echo
  "${java_run[@]}" -cp "$jar" io.kvrouter.loadtest.soak.SoakReport "$csv" "$out/soak.png"
} | tee "$out/summary.md"
