#!/usr/bin/env bash
# What do the reservation and event planes cost as the cluster grows? For each cluster size K
# (default 1, 2, 4 ingress processes) starts, on loopback and in separate processes, K kvrouter
# ingresses and one agent running simulated vLLM engines (timing model sped up, so the engines cost
# almost nothing), then runs two phases under the same load:
#   1. event plane only: the bench sends straight to the engines (each of 8 prefix groups to one
#      engine),
#      so every ingress only follows the engines' KV events and load heartbeats; its CPU over the
#      phase is the event plane's cost per ingress (plus the cluster's idle background);
#   0. idle (before phase 1): no traffic for as long as phase 1 lasts; the ingresses' CPU over it
#      is the cluster's background (gossip, failure detection, load heartbeats, timers), which
#      grows with the number of members; subtracted from phase 1 it leaves the event plane's own
#      cost per ingress;
#      each ingress also counts, in-process, the thread CPU it spends decoding and applying
#      event-plane messages (kvrouter_plane_cpu_seconds_total{plane="events"}): the plane's own
#      work without the background, printed per ingress;
#   2. routed: the same bench through the ingresses (round robin over them); the ingresses' plane
#      counters (kvrouter_plane_bytes_total) give the reservation bytes per routed request.
# Prints one markdown table row per K and writes it to <out>/planes.md.
#
# Usage, from anywhere:  load-tests/bench/planes.sh [--ingresses 1,2,4] [--engines 4]
#   [--rate 40] [--requests 1200] [--max-tokens 16] [--out DIR]
# Environment: INGRESS_JAVA_OPTS (options of each ingress JVM), KEEP=1 keeps the processes of the
# last size running. Every process is started and stopped by this script; each step is bounded.
# CPU figures are process CPU time from /proc: run it on a quiet machine.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sizes=1,2,4 engines=4 rate=40 requests=1200 max_tokens=16
out="$root/load-tests/target/planes"
while [ $# -gt 0 ]; do
  case "$1" in
    --ingresses) sizes="$2"; shift 2 ;;
    --engines) engines="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --max-tokens) max_tokens="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n 2,22p "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

source "$here/lib.sh"

# CPU seconds (user + system) of one process, from /proc/<pid>/stat fields 14 and 15.
cpu_of() {
  echo "scale=3; $(awk '{print $14 + $15}' "/proc/$1/stat") / $(getconf CLK_TCK)" | bc
}

# Sum of a Prometheus sample over the lines whose labels contain every given filter.
metric() { # url name [filter...]
  local url="$1" name="$2"; shift 2
  curl -sf "$url/metrics" | awk -v n="$name" -v f="$*" '
    index($0, n) == 1 { ok = 1; k = split(f, fs, " ");
      for (i = 1; i <= k; i++) if (!index($0, fs[i])) ok = 0;
      if (ok) s += $NF }
    END { printf "%.6f\n", s }'
}

wait_until() { # seconds description command...
  local wait="$1" deadline=$((SECONDS + $1)) what="$2"; shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { echo "not ready after ${wait}s: $what (logs in $work)" >&2; exit 1; }
    sleep 0.5
  done
}
ready_with_replicas() { # url
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/ready")" = 200 ] &&
    [ "$(curl -sf "$1/admin/replicas" | jq 'length')" = "$engines" ]
}

bench() { # label urls policy seed
  timeout 600 "${java_run[@]}" -jar "$jar" bench --url "$2" --target-policy "$3" \
    --workload shared-prefix --groups 8 --prompts-per-group $(((requests + 7) / 8)) \
    --rate "$rate" --requests "$requests" --max-tokens "$max_tokens" \
    --seed "$4" --label "$1" --out "$work/$1" >"$work/$1.log" 2>&1
}

header="| ingresses | routed requests | reservation bytes sent per routed request (all peers) | per request per peer | reservation msgs per request per peer | event bytes received per ingress per request | CPU per ingress, idle (s) | CPU per ingress, event plane only (s) | event plane less idle (s) | event-plane work per ingress, decode + apply (ms) | CPU per ingress, routed (s) | CPU per routed request, summed over ingresses (ms) |"
rule="|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
rows=()
IFS=, read -r -a ks <<<"$sizes"
for k in "${ks[@]}"; do
  echo "== $k ingress(es), $engines engines (logs in $work/k$k)" >&2
  mkdir -p "$work/k$k"
  read -r -a ports < <(free_ports $((2 * k + 1)))
  seed="pekko://kvrouter@127.0.0.1:${ports[0]}"
  ingress_pids=() urls=()
  for i in $(seq 0 $((k - 1))); do
    "${java_run[@]}" ${INGRESS_JAVA_OPTS:-} -jar "$jar" ingress --host 127.0.0.1 \
      --port "${ports[$((2 * i))]}" --http-host 127.0.0.1 --http-port "${ports[$((2 * i + 1))]}" \
      --seed-nodes "$seed" >"$work/k$k/ingress-$i.log" 2>&1 &
    pids+=($!); ingress_pids+=($!); urls+=("http://127.0.0.1:${ports[$((2 * i + 1))]}")
    # The first ingress is the seed: the others join once it serves.
    [ "$i" != 0 ] || wait_until 300 "${urls[0]}/metrics" curl -sf -o /dev/null "${urls[0]}/metrics"
  done
  "${java_run[@]}" -jar "$jar" agent --host 127.0.0.1 --port "${ports[$((2 * k))]}" \
    --seed-nodes "$seed" --sim "$engines" --sim-http-base 0 --sim-zmq-base 0 \
    --speedup 1000 --num-blocks 65536 >"$work/k$k/agent.log" 2>&1 &
  pids+=($!)
  for u in "${urls[@]}"; do wait_until 300 "$u/ready" ready_with_replicas "$u"; done
  engine_urls="$(curl -sf "${urls[0]}/admin/replicas" | jq -r '[.[] | .url] | join(",")')"
  all_urls="$(IFS=,; echo "${urls[*]}")"

  # Warm-up (unmeasured): JIT-compile the routed path on every ingress.
  bench "k$k/warmup" "$all_urls" round-robin 99

  # Phase 0: idle, as long as phase 1 lasts (a measurement window, not a wait for anything).
  declare -A cpui=() cpu0=() cpu1=() cpu2=()
  for p in "${ingress_pids[@]}"; do cpui[$p]="$(cpu_of "$p")"; done
  sleep "$(((requests + rate - 1) / rate))"

  # Phase 1: the event plane only. Besides process CPU, each ingress's own account of the thread
  # CPU it spent decoding and applying event-plane messages (kvrouter_plane_cpu_seconds_total).
  plane_cpu() { for u in "${urls[@]}"; do metric "$u" kvrouter_plane_cpu_seconds_total 'plane="events"'; done; }
  ev_work0="$(plane_cpu | awk '{ s += $1 } END { print s }')"
  for p in "${ingress_pids[@]}"; do cpu0[$p]="$(cpu_of "$p")"; done
  bench "k$k/engines" "$engine_urls" group-affinity 1
  for p in "${ingress_pids[@]}"; do cpu1[$p]="$(cpu_of "$p")"; done
  ev_work="$(plane_cpu | awk -v b="$ev_work0" '{ s += $1 } END { print s - b }')"

  # Phase 2: routed through the ingresses.
  snap() { # file
    for u in "${urls[@]}"; do
      echo "$(metric "$u" kvrouter_requests_total 'status="200"')" \
        "$(metric "$u" kvrouter_plane_bytes_total 'plane="reservations"' 'direction="sent"')" \
        "$(metric "$u" kvrouter_plane_messages_total 'plane="reservations"' 'direction="sent"')" \
        "$(metric "$u" kvrouter_plane_bytes_total 'plane="events"' 'direction="received"')"
    done >"$1"
  }
  snap "$work/k$k/before"
  bench "k$k/routed" "$all_urls" round-robin 1
  for p in "${ingress_pids[@]}"; do cpu2[$p]="$(cpu_of "$p")"; done
  snap "$work/k$k/after"

  read -r routed res_bytes res_msgs ev_bytes < <(paste "$work/k$k/before" "$work/k$k/after" |
    awk '{ r += $5 - $1; b += $6 - $2; m += $7 - $3; e += $8 - $4 } END { print r, b, m, e }')
  idle_cpu=0 ev_cpu=0 routed_cpu=0
  for p in "${ingress_pids[@]}"; do
    idle_cpu="$(echo "$idle_cpu + ${cpu0[$p]} - ${cpui[$p]}" | bc)"
    ev_cpu="$(echo "$ev_cpu + ${cpu1[$p]} - ${cpu0[$p]}" | bc)"
    routed_cpu="$(echo "$routed_cpu + ${cpu2[$p]} - ${cpu1[$p]}" | bc)"
  done
  peers=$((k > 1 ? k - 1 : 1))
  row="$(awk -v k="$k" -v r="$routed" -v b="$res_bytes" -v m="$res_msgs" -v e="$ev_bytes" \
    -v ic="$idle_cpu" -v ec="$ev_cpu" -v rc="$routed_cpu" -v p="$peers" -v w="$ev_work" 'BEGIN {
      if (r == 0) r = 1;
      printf "| %d | %d | %.0f | %.0f | %.2f | %.0f | %.2f | %.2f | %.2f | %.1f | %.2f | %.2f |",
        k, r, b / r, b / r / p, m / r / p, e / k / r, ic / k, ec / k, (ec - ic) / k,
        1000 * w / k, rc / k, 1000 * rc / r }')"
  echo "$row" >&2
  rows+=("$row")
  if [ "$k" != "${ks[-1]}" ] || [ "${KEEP:-0}" != 1 ]; then stop_all; fi
done

{
  echo "Load: shared-prefix, $requests requests at $rate/s, max_tokens $max_tokens, $engines sim engines"
  echo "(speedup 1000); $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "$header"
  echo "$rule"
  printf '%s\n' "${rows[@]}"
} | tee "$out/planes.md"
