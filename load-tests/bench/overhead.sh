#!/usr/bin/env bash
# What does the ingress add over a plain reverse proxy? Starts, on loopback and in separate
# processes, one simulated vLLM engine (timing model sped up, so the engine itself costs almost
# nothing), its replica agent, one kvrouter ingress, nginx (plain proxy_pass with keep-alive, no
# buffering), a bare Pekko HTTP proxy (BarePekkoProxy: the ingress's HTTP layer and settings, none
# of its work) and a bare Netty relay (NettyRelayProxy: what another HTTP layer would cost), warms
# each path up, then runs the same open-loop bench against the engine directly and through each
# proxy, and prints TTFT and each proxy's CPU per request (process CPU time from /proc divided by
# requests). Then the long-conversation check: the next turn of a 32k- and a 128k-token chat
# through the ingress and each plain proxy versus the engine directly.
#
# Usage, from anywhere:  load-tests/bench/overhead.sh [--rate 100] [--requests 2000]
#   [--max-tokens 16] [--rounds 1] [--conversations 32768,131072|none] [--out DIR]
# Environment: INGRESS_JAVA_OPTS (options of the ingress JVM), PEKKO_JAVA_OPTS (of the bare Pekko
# proxy), PEKKO_CLIENT=netty (the bare Pekko proxy's upstream requests through a Netty client,
# NettyUpstreamClient, instead of Pekko HTTP's connection pool), WARMUP_ROUNDS (most extra warm-up
# rounds of each JVM proxy, 8), PROFILE=1 records the measured ingress runs (and the "before"
# ones) with JFR (ingress-<round>.jfr, before-<round>.jfr in the output directory), KEEP=1 keeps the processes running at the end (the
# script prints their ports), KVROUTER_JAR (the jar measured, default the build's, built when a
# source is newer), BEFORE_JAR=<kvrouter-all.jar of another build> adds that build's
# ingress (with its own agent, in its own cluster, on the same engine) as the path "before", measured
# in the same rotation as "ingress" (a change's before and after in one run), PATHS (the paths
# measured, default "engine nginx pekko netty ingress", plus "before" with BEFORE_JAR),
# BEFORE_JAVA_OPTS (options of the "before" ingress's JVM, default INGRESS_JAVA_OPTS), TURNS and
# WARMUP_TURNS (measured and unmeasured turns of each long conversation, 15 and 30),
# CONVERSATION_MODE (turns, repeat or both).
# Figures are ratios within one run: run it on a quiet machine.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rate=100 requests=2000 max_tokens=16 rounds=1 conversations=32768,131072
out="$root/load-tests/target/overhead"
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --max-tokens) max_tokens="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --conversations) conversations="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

if [ -z "${KVROUTER_JAR:-}" ]; then
  "$root/kvrouter" --version >/dev/null   # builds the jar when a source is newer
fi
jar="${KVROUTER_JAR:-$root/distribution/target/kvrouter-all.jar}"
java_run=(java -Dai.djl.offline=true -DOPT_OUT_TRACKING=true)
paths="${PATHS:-engine nginx pekko netty ingress${BEFORE_JAR:+ before}}"
has() { case " $paths " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
if has nginx && [ ! -x "$nginx_bin" ]; then
  echo "nginx not found (apt-get install nginx, or leave it out of PATHS)" >&2
  exit 1
fi

mkdir -p "$out"
work="$(mktemp -d)"
pids=()
cleanup() {
  if [ "${KEEP:-0}" != 1 ]; then
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# Free loopback ports, chosen by the kernel.
read -r p_engine p_zmq p_replay p_ingress p_icluster p_acluster p_nginx p_pekko p_netty p_before \
  p_bcluster p_bacluster < <(python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(12)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
)

max_len=262144
cat > "$work/ingress.conf" <<CONF
kvrouter.models.kvrouter-demo.max-model-len = $max_len
CONF

echo "engine :$p_engine  ingress :$p_ingress  nginx :$p_nginx  pekko :$p_pekko  netty :$p_netty  (logs in $work)"
"${java_run[@]}" -jar "$jar" sim-engine --port "$p_engine" --speedup 1000 --num-blocks 65536 \
  --kv-events "tcp://127.0.0.1:$p_zmq" --replay "tcp://127.0.0.1:$p_replay" \
  >"$work/engine.log" 2>&1 &
pids+=($!); engine_pid=$!
# An ingress and its agent on the engine, in a cluster of their own; sets started_pid (the ingress).
start_ingress() { # jar java_opts http_port ingress_cluster_port agent_cluster_port log_name
  "${java_run[@]}" $2 -jar "$1" ingress --config "$work/ingress.conf" \
    --host 127.0.0.1 --port "$4" --http-host 127.0.0.1 --http-port "$3" \
    --seed-nodes "pekko://kvrouter@127.0.0.1:$4" >"$work/$6.log" 2>&1 &
  pids+=($!); started_pid=$!
  "${java_run[@]}" -jar "$1" agent --host 127.0.0.1 --port "$5" \
    --seed-nodes "pekko://kvrouter@127.0.0.1:$4" \
    --engine-url "http://127.0.0.1:$p_engine" --kv-events "tcp://127.0.0.1:$p_zmq" \
    --replay "tcp://127.0.0.1:$p_replay" >"$work/$6-agent.log" 2>&1 &
  pids+=($!)
}
start_ingress "$jar" "${INGRESS_JAVA_OPTS:-}" "$p_ingress" "$p_icluster" "$p_acluster" ingress
ingress_pid=$started_pid
"${java_run[@]}" ${PEKKO_JAVA_OPTS:-} -cp "$jar" io.kvrouter.loadtest.bench.BarePekkoProxy --port "$p_pekko" \
  --client "${PEKKO_CLIENT:-pekko}" \
  --upstream "http://127.0.0.1:$p_engine" >"$work/pekko.log" 2>&1 &
pids+=($!); pekko_pid=$!
"${java_run[@]}" -cp "$jar" io.kvrouter.loadtest.bench.NettyRelayProxy --port "$p_netty" \
  --upstream "http://127.0.0.1:$p_engine" >"$work/netty.log" 2>&1 &
pids+=($!); netty_pid=$!
before_pid=""
if [ -n "${BEFORE_JAR:-}" ]; then
  start_ingress "$BEFORE_JAR" "${BEFORE_JAVA_OPTS-${INGRESS_JAVA_OPTS:-}}" "$p_before" "$p_bcluster" \
    "$p_bacluster" before
  before_pid=$started_pid
fi
url_of() {
  case "$1" in
    engine) echo "http://127.0.0.1:$p_engine" ;; nginx) echo "http://127.0.0.1:$p_nginx" ;;
    pekko) echo "http://127.0.0.1:$p_pekko" ;; netty) echo "http://127.0.0.1:$p_netty" ;;
    ingress) echo "http://127.0.0.1:$p_ingress" ;; before) echo "http://127.0.0.1:$p_before" ;;
  esac
}
pid_of() {
  case "$1" in
    pekko) echo "$pekko_pid" ;; netty) echo "$netty_pid" ;; ingress) echo "$ingress_pid" ;;
    before) echo "$before_pid" ;; *) echo "$engine_pid" ;;
  esac
}

if has nginx; then
mkdir -p "$work/nginx"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  # Bodies stay in memory: nginx's workers cannot write this root-owned temporary directory, and a
  # long conversation's body (hundreds of kilobytes) would otherwise fail with 500.
  client_body_buffer_size 8m;
  upstream engine { server 127.0.0.1:$p_engine; keepalive 64; }
  server {
    listen 127.0.0.1:$p_nginx;
    client_max_body_size 8m;
    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
CONF
"$nginx_bin" -c "$work/nginx.conf" -p "$work/nginx"
fi

wait_for() { # url seconds
  local deadline=$((SECONDS + $2))
  until curl -sf -o /dev/null "$1"; do
    [ $SECONDS -lt $deadline ] || { echo "not ready: $1 (see $work)" >&2; exit 1; }
    sleep 0.5
  done
}
wait_for "http://127.0.0.1:$p_engine/v1/models" 90
if has nginx; then wait_for "http://127.0.0.1:$p_nginx/v1/models" 30; fi
wait_for "http://127.0.0.1:$p_pekko/v1/models" 60
wait_for "http://127.0.0.1:$p_netty/v1/models" 60
for i in ingress ${before_pid:+before}; do
  wait_for "$(url_of "$i")/ready" 300
  until curl -sf "$(url_of "$i")/v1/models" | grep -q kvrouter-demo; do sleep 0.5; done
done

# CPU seconds (user + system) of a set of processes, from /proc/<pid>/stat fields 14 and 15.
cpu_of() {
  local tck total=0 p
  tck="$(getconf CLK_TCK)"
  for p in "$@"; do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "scale=6; $total / $tck" | bc
}
# CPU ticks of every thread of a process, summed by thread name with digits dropped (pool
# threads fold into one line): "name ticks" lines, for the per-thread breakdown.
thread_ticks() {
  for t in /proc/"$1"/task/*; do
    awk '{ s = $0; sub(/^[^(]*\(/, "", s); name = substr(s, 1, index(s, ")") - 1);
           sub(/^.*\) /, "", s); split(s, f, " "); gsub(/[0-9]+/, "", name);
           print name "\t" f[12] + f[13] }' "$t/stat" 2>/dev/null
  done | awk -F'\t' '{ a[$1] += $2 } END { for (k in a) print k "\t" a[k] }' | sort
}
# Context switches (voluntary and not) of every thread of a process: each hand-off of work between
# threads that finds the other asleep costs a wake-up, which is most of a proxy's system time.
ctx_switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { s += $2 } END { print s + 0 }'
}
nginx_pids() { echo "$(cat "$work/nginx.pid") $(pgrep -P "$(cat "$work/nginx.pid")" | tr '\n' ' ')"; }

bench() { # label url requests seed out
  "${java_run[@]}" -jar "$jar" bench --url "$2" --workload random --rate "$rate" --requests "$3" \
    --max-tokens "$max_tokens" --seed "$4" --label "$1" --out "$5" >"$5.log" 2>&1
}

# Warm-up: JIT-compile every path (unmeasured; the JVM's compiler threads still show in the
# per-thread breakdown when this was not enough).
for label in $paths; do
  bench "warmup-$label" "$(url_of "$label")" 1500 99 "$work/warmup-$label"
done
# The ingress runs far more distinct code per request than the engine (Pekko HTTP server and
# client, streams, the tracker); code run once per request reaches C2 only after several thousand
# requests, and until then runs in slower profiled tiers while the compiler threads take more CPU
# than the request itself. So warm it up until its compiler threads take under 0.2 ms per request
# (at most 8 more rounds of 2,000 requests). The bare Pekko and Netty proxies get the same.
jit_ticks() { # pid
  for t in /proc/"$1"/task/*; do
    if grep -q CompilerThre "$t/comm" 2>/dev/null; then
      awk '{print $14 + $15}' "$t/stat" 2>/dev/null || true
    fi
  done | awk '{ s += $1 } END { print s + 0 }'
}
for label in $paths; do
  case "$label" in engine|nginx) continue ;; esac
  set -- "$label" "$(pid_of "$label")" "$(url_of "$label")"
  for w in $(seq 1 "${WARMUP_ROUNDS:-8}"); do
    j0="$(jit_ticks "$2")"
    bench "warmup-$1-$w" "$3" 2000 "$((100 + w))" "$work/warmup-$1-$w"
    jit_ms="$(echo "scale=3; ($(jit_ticks "$2") - $j0) * 1000 / $(getconf CLK_TCK) / 2000" | bc)"
    echo "$1 warm-up round $w: JIT compiler threads $jit_ms ms per request"
    if [ "$(echo "$jit_ms < 0.2" | bc)" = 1 ]; then break; fi
  done
done

declare -A cpu
for round in $(seq 1 "$rounds"); do
  for label in $paths; do
    set -- "$label" "$(url_of "$label")"
    case "$1" in
      nginx) procs="$(nginx_pids)" ;;
      *) procs="$(pid_of "$1")" ;;
    esac
    jvm=""   # the JVM proxies get a per-thread breakdown and their JIT share taken out
    case "$1" in ingress|pekko|netty|before) jvm="$procs" ;; esac
    if { [ "$1" = ingress ] || [ "$1" = before ]; } && [ -n "${PROFILE:-}" ]; then
      jcmd "$(pid_of "$1")" JFR.start name=hot settings="${JFR_SETTINGS:-profile}" filename="$out/$1-$round.jfr" >/dev/null
    fi
    [ -n "$jvm" ] && thread_ticks "$jvm" >"$work/threads-before"
    [ -n "$jvm" ] && switches_before="$(ctx_switches "$jvm")"
    before="$(cpu_of $procs)"
    bench "$1" "$2" "$requests" "$round" "$out/$1-$round"
    after="$(cpu_of $procs)"
    if [ -n "$jvm" ]; then
      thread_ticks "$jvm" >"$work/threads-after"
      # Per-thread-group CPU ms per request, largest first.
      join -t $'\t' -a 2 -e 0 -o 0,1.2,2.2 "$work/threads-before" "$work/threads-after" |
        awk -F'\t' -v r="$requests" -v tck="$(getconf CLK_TCK)" \
          '{ d = ($3 - $2) * 1000 / tck / r; if (d > 0) printf "%8.3f ms/request  %s\n", d, $1 }' |
        sort -rn >"$out/$1-threads-$round.txt"
      echo "$(( ($(ctx_switches "$jvm") - switches_before) / requests )) context switches/request (all threads)" \
        >>"$out/$1-threads-$round.txt"
    fi
    if { [ "$1" = ingress ] || [ "$1" = before ]; } && [ -n "${PROFILE:-}" ]; then
      jcmd "$(pid_of "$1")" JFR.stop name=hot >/dev/null
    fi
    # Per request that reached the proxy (a saturated proxy makes the bench drop some).
    sent="$(jq -r '.counts.sent' "$out/$1-$round/results.json")"
    cpu["$1-$round"]="$(echo "scale=4; ($after - $before) * 1000 / $sent" | bc)"
    if [ -n "$jvm" ]; then
      # The JIT compiler's share (C1/C2 threads): what a long-running JVM no longer pays.
      jit="$(join -t $'\t' "$work/threads-before" "$work/threads-after" |
        awk -F'\t' -v tck="$(getconf CLK_TCK)" '$1 ~ /CompilerThre/ { d += $3 - $2 }
          END { printf "%.6f", d / tck }')"
      cpu["$1-$round"]="${cpu[$1-$round]} ($(echo "scale=4; ($after - $before - $jit) * 1000 / $sent" | bc) without JIT)"
    fi
  done
done

ttft() { jq -r ".latencyMs.ttft.corrected.$2 * 100 | round / 100" "$1/results.json"; }
{
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) on $(nproc) cores; $rounds round(s) of $requests requests at $rate req/s"
  echo
  echo "| round | path | sent / ok | TTFT p50 ms | TTFT p99 ms | CPU per request ms (proxy process; JVM proxies also without JIT compiler threads) |"
  echo "|---|---|---:|---:|---:|---:|"
  for round in $(seq 1 "$rounds"); do
    for label in $paths; do
      d="$out/$label-$round"
      c="${cpu[$label-$round]}"
      [ "$label" = engine ] && c="($c engine)"
      printf '| %s | %s | %s | %s | %s | %s |\n' "$round" "$label" \
        "$(jq -r '"\(.counts.sent) / \(.counts.ok)"' "$d/results.json")" \
        "$(ttft "$d" p50)" "$(ttft "$d" p99)" "$c"
    done
  done
  echo
  for label in $paths; do
    case "$label" in engine|nginx) continue ;; esac
    echo
    echo "$label CPU per request by thread group (round 1): $out/$label-threads-1.txt"
    grep -v 'context switches' "$out/$label-threads-1.txt" | head -8
    tail -1 "$out/$label-threads-1.txt"
  done
} | tee "$out/table.md"

if [ -n "$conversations" ] && [ "$conversations" != none ]; then
  echo
  echo "Long conversations: the next turn (streaming, max_tokens 1), median of ${TURNS:-15} turns each after ${WARMUP_TURNS:-30} unmeasured"
  "${java_run[@]}" -cp "$jar" io.kvrouter.loadtest.bench.ConversationTurns \
    --engine "http://127.0.0.1:$p_engine" --ingress "http://127.0.0.1:$p_ingress" \
    --proxies "$(for l in $paths; do
      case "$l" in engine|ingress) ;; *) printf '%s=%s,' "$l" "$(url_of "$l")" ;; esac
    done)" --sizes "$conversations" --turns "${TURNS:-15}" --warmup "${WARMUP_TURNS:-30}" --mode "${CONVERSATION_MODE:-both}"
fi 2>&1 | tee -a "$out/table.md"

if [ "${KEEP:-0}" = 1 ]; then
  echo "kept running: engine $p_engine, nginx $p_nginx, ingress $p_ingress; pids ${pids[*]}"
  trap - EXIT
fi
