# Shared by the bench scripts (sourced, after they set root and out): builds the jar when a source
# is newer (or takes KVROUTER_JAR, another build's kvrouter-all.jar, as it is), sets jar and
# java_run, makes out and a work directory, and stops every process whose pid is in pids on exit
# (KEEP=1 leaves them running). free_ports N prints N free loopback ports.

if [ -z "${KVROUTER_JAR:-}" ]; then
  "$root/kvrouter" --version >/dev/null   # builds the jar when a source is newer
fi
jar="${KVROUTER_JAR:-$root/distribution/target/kvrouter-all.jar}"
java_run=(java -Dai.djl.offline=true -DOPT_OUT_TRACKING=true)
mkdir -p "$out"
work="$(mktemp -d)"
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null || true
  done
  pids=()
}
trap '[ "${KEEP:-0}" = 1 ] || stop_all' EXIT

free_ports() { # n
  python3 - "$1" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
}
