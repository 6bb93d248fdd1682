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
# the processes running at the end, BEFORE_JAR=<kvrouter-all.jar of another build> adds that
# build's picker (with its own agent and engines, in its own cluster) as "before", measured
# alternately with this build's ("after") round by round (in turn first), each round its own `bench picker` run
# (so a change's before and after in one run, under the same load), BEFORE_JAVA_OPTS (options of
# the "before" picker's JVM, default PICKER_JAVA_OPTS).
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
    -h|--help) sed -n 2,22p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. "$here/lib.sh"   # jar, java_run, out, work, pids stopped on exit, free_ports

read -r p_http p_extproc p_icluster p_acluster p_bhttp p_bextproc p_bicluster p_bacluster \
  < <(free_ports 8)

# A picker and its agent with simulated engines, in a cluster of their own, waiting until the
# engines are registered; sets started_pid (the picker).
start_picker() { # jar java_opts http_port extproc_port picker_cluster_port agent_cluster_port name
  cat > "$work/$7.conf" <<CONF
kvrouter.models.kvrouter-demo.max-model-len = 262144
kvrouter.ingress.extproc {
  enabled = on
  host = "127.0.0.1"
  port = $4
}
CONF
  echo "$7 picker: ext_proc :$4, http :$3; $engines simulated engines (logs in $work)"
  "${java_run[@]}" $2 -jar "$1" ingress --config "$work/$7.conf" \
    --host 127.0.0.1 --port "$5" --http-host 127.0.0.1 --http-port "$3" \
    --seed-nodes "pekko://kvrouter@127.0.0.1:$5" >"$work/$7.log" 2>&1 &
  pids+=($!); started_pid=$!
  "${java_run[@]}" -jar "$1" agent --host 127.0.0.1 --port "$6" \
    --seed-nodes "pekko://kvrouter@127.0.0.1:$5" \
    --sim "$engines" --sim-http-base 0 --sim-zmq-base 0 --num-blocks 65536 \
    >"$work/$7-agent.log" 2>&1 &
  pids+=($!)
  local deadline=$((SECONDS + 300))
  until [ "$(curl -sf "http://127.0.0.1:$3/admin/replicas" | jq length 2>/dev/null || echo 0)" \
    -ge "$engines" ]; do
    [ $SECONDS -lt $deadline ] || { echo "$7: replicas not registered (see $work)" >&2; exit 1; }
    sleep 0.5
  done
}
start_picker "$jar" "${PICKER_JAVA_OPTS:-}" "$p_http" "$p_extproc" "$p_icluster" "$p_acluster" \
  picker
picker_pid=$started_pid
builds="picker"
if [ -n "${BEFORE_JAR:-}" ]; then
  start_picker "$BEFORE_JAR" "${BEFORE_JAVA_OPTS-${PICKER_JAVA_OPTS:-}}" "$p_bhttp" "$p_bextproc" \
    "$p_bicluster" "$p_bacluster" before
  before_pid=$started_pid
  builds="after before"
fi

table="$out/table.md"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) on $(nproc) cores" >"$table"
first=1
# One `bench picker` run against a build: bench_run build tokens rate rounds log
bench_run() {
  local port=$p_extproc pid=$picker_pid
  [ "$1" = before ] && port=$p_bextproc pid=$before_pid
  "${java_run[@]}" -jar "$jar" bench picker --target "127.0.0.1:$port" --pid "$pid" \
    --tokens "$2" --rate "$3" --decisions "$decisions" --warmup "$warmup" \
    --warmup-rounds "$warmup_rounds" --rounds "$4" >"$5" 2>&1 || true
  cat "$5"
  if [ "$first" = 1 ]; then grep '^|' "$5" | head -2 >>"$table"; first=0; fi
  if [ "$1" = picker ]; then
    grep '^| [0-9]' "$5" >>"$table" || true
  else # the build in the round column, and the round's number in the alternation
    grep '^| [0-9]' "$5" | sed "s/| round 1 |/| $1, round $6 |/" >>"$table" || true
  fi
}
for c in $cases; do
  tokens="${c%@*}" rest="${c#*@}"
  rate="${rest%x*}" rounds=1
  [ "$rest" != "$rate" ] && rounds="${rest#*x}"
  label="${tokens}tok-${rate}per-s"
  if [ "$builds" = picker ]; then
    bench_run picker "$tokens" "$rate" "$rounds" "$out/$label.log"
  else
    for r in $(seq "$rounds"); do
      order=$builds
      [ $((r % 2)) = 0 ] && order="${builds#* } ${builds%% *}" # every other round before first
      for b in $order; do
        bench_run "$b" "$tokens" "$rate" 1 "$out/$label-$b-$r.log" "$r"
      done
    done
  fi
done
echo
cat "$table"

if [ "${KEEP:-0}" = 1 ]; then
  echo "kept running: picker pid $picker_pid, ext_proc $p_extproc, http $p_http; pids ${pids[*]}"
fi
