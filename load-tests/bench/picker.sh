#!/usr/bin/env bash
# What does one endpoint-picker decision cost? Starts, on loopback and in separate processes, an
# agent with simulated vLLM engines in-process (registered as replicas; the bench never calls them)
# and a kvrouter ingress with its ext_proc endpoint picker on, in its own JVM so its CPU can be
# measured; then runs `kvrouter bench picker` (PickerBench), which plays Envoy: one ext_proc gRPC
# stream per request (request headers, the chat body in 16 KiB chunks, then the response phase) at
# a fixed open-loop rate. Each case gets unmeasured warm-up rounds first (until the picker's JIT
# compiler threads take under 0.05 ms per decision, at most --warmup-rounds), then its measured
# rounds; the table gives decision time (headers sent to the destination's reply), errors and the
# picker's process CPU per decision from /proc.
#
# Usage, from anywhere:  load-tests/bench/picker.sh [--cases "1024@100 1024@200x3 32768@100 32768@200"]
#   [--decisions 3000] [--warmup 3000] [--warmup-rounds 5] [--engines 4] [--out DIR]
# A case is TOKENS@RATE, with xN for N measured rounds. Environment: PICKER_JAVA_OPTS (options of
# the picker's JVM; to profile it, e.g. -XX:StartFlightRecording=settings=profile,filename=p.jfr
# from the start, which does not disturb the JIT as a recording started mid-run does), KEEP=1 keeps
# the processes running at the end.
# Figures are ratios within one run: run it on a quiet machine, and read the load it reports.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cases="1024@100 1024@200x3 32768@100 32768@200" decisions=3000 warmup=3000 warmup_rounds=5
engines=4
out="$root/load-tests/target/picker"
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases="$2"; shift 2 ;;
    --decisions) decisions="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --warmup-rounds) warmup_rounds="$2"; shift 2 ;;
    --engines) engines="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n 2,18p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. "$here/lib.sh"   # jar, java_run, out, work, pids stopped on exit, free_ports

read -r p_http p_extproc p_icluster p_acluster < <(free_ports 4)

cat > "$work/picker.conf" <<CONF
kvrouter.models.kvrouter-demo.max-model-len = 262144
kvrouter.ingress.extproc {
  enabled = on
  host = "127.0.0.1"
  port = $p_extproc
}
CONF

echo "picker: ext_proc :$p_extproc, http :$p_http; $engines simulated engines (logs in $work)"
"${java_run[@]}" ${PICKER_JAVA_OPTS:-} -jar "$jar" ingress --config "$work/picker.conf" \
  --host 127.0.0.1 --port "$p_icluster" --http-host 127.0.0.1 --http-port "$p_http" \
  --seed-nodes "pekko://kvrouter@127.0.0.1:$p_icluster" >"$work/picker.log" 2>&1 &
pids+=($!); picker_pid=$!
"${java_run[@]}" -jar "$jar" agent --host 127.0.0.1 --port "$p_acluster" \
  --seed-nodes "pekko://kvrouter@127.0.0.1:$p_icluster" \
  --sim "$engines" --sim-http-base 0 --sim-zmq-base 0 --num-blocks 65536 \
  >"$work/agent.log" 2>&1 &
pids+=($!)

deadline=$((SECONDS + 300))
until [ "$(curl -sf "http://127.0.0.1:$p_http/admin/replicas" | jq length 2>/dev/null || echo 0)" -ge "$engines" ]; do
  [ $SECONDS -lt $deadline ] || { echo "replicas not registered (see $work)" >&2; exit 1; }
  sleep 0.5
done

table="$out/table.md"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) on $(nproc) cores" >"$table"
first=1
for c in $cases; do
  tokens="${c%@*}" rest="${c#*@}"
  rate="${rest%x*}" rounds=1
  [ "$rest" != "$rate" ] && rounds="${rest#*x}"
  label="${tokens}tok-${rate}per-s"
  "${java_run[@]}" -jar "$jar" bench picker --target "127.0.0.1:$p_extproc" --pid "$picker_pid" \
    --tokens "$tokens" --rate "$rate" --decisions "$decisions" --warmup "$warmup" \
    --warmup-rounds "$warmup_rounds" --rounds "$rounds" >"$out/$label.log" 2>&1 || true
  cat "$out/$label.log"
  if [ "$first" = 1 ]; then grep '^|' "$out/$label.log" | head -2 >>"$table"; first=0; fi
  grep '^| [0-9]' "$out/$label.log" >>"$table" || true
done
echo
cat "$table"

if [ "${KEEP:-0}" = 1 ]; then
  echo "kept running: picker pid $picker_pid, ext_proc $p_extproc, http $p_http; pids ${pids[*]}"
fi
