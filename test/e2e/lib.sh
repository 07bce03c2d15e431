# Shared by the end-to-end tests: a private temp dir cleaned on exit, process
# tracking, bounded waits, and checks that say what failed.
set -euo pipefail
E2E_TMP=$(mktemp -d /tmp/fedmetrics-e2e.XXXXXX)

# Every process a test runs in the background is started by spawn (or by
# start_serve, start_sim, ... which use it), so that the cleanup can judge how
# it ended: the sanitizer pass depends on it, since LeakSanitizer reports at
# exit and UBSan halts the process, which only its log and its exit status show.
E2E_PIDS=()             # in start order ("${E2E_PIDS[-1]}": the last one)
declare -A E2E_LOG=()   # PID -> the file its stdout and stderr go to
declare -A E2E_WHAT=()  # PID -> its command line, to name it
declare -A E2E_OK=()    # PID -> the exit statuses that are not a failure: 0, and 128+N after signal N from the test
declare -A E2E_STATUS=()  # PID -> its exit status, once waited for
declare -A E2E_JUDGED=()  # PID -> 1 when the test judged the status itself (reap)

# spawn LOG COMMAND...: runs COMMAND in the background, its stdout and stderr
# in LOG (its stdin is the caller's, so a here-document works), and sets
# $spawned to its PID. At exit the cleanup stops it with SIGTERM and fails
# the test if it ended otherwise than with status 0 or by a signal the test
# sent it, or if its log (or any file in $E2E_TMP) holds a sanitizer report.
spawn() {
  local log=$1; shift
  "$@" <&0 >"$log" 2>&1 &
  spawned=$!
  E2E_PIDS+=("$spawned")
  E2E_LOG[$spawned]=$log
  E2E_WHAT[$spawned]=$*
  E2E_OK[$spawned]=0
}
# signal PID [SIGNAL]: sends SIGNAL (TERM) to a spawned process; its death by
# that signal is then expected.
signal() {
  local number
  number=$(kill -l "${2:-TERM}" 2>/dev/null || echo "${2:-TERM}")
  case $number in [0-9]*) ;; *) number=$(kill -l "SIG$number") ;; esac
  E2E_OK[$1]="${E2E_OK[$1]:-0} $((128 + number))"
  kill -s "${2:-TERM}" "$1" 2>/dev/null || true
}
# stop PID [SIGNAL]: signal, then waits for the process (the cleanup judges its status).
stop() { signal "$@"; e2e_wait "$1"; }
# reap PID: waits for a spawned process and returns its exit status, for the
# test to judge (its log is still searched for a sanitizer report).
reap() { e2e_wait "$1"; E2E_JUDGED[$1]=1; return "${E2E_STATUS[$1]}"; }
e2e_wait() {
  [ -n "${E2E_STATUS[$1]:-}" ] && return 0
  local status=0
  wait "$1" 2>/dev/null || status=$?
  E2E_STATUS[$1]=$status
}

# A sanitizer's report (ASan, LeakSanitizer, UBSan's "runtime error:", TSan, MSan).
E2E_SANITIZER_REPORT='ERROR: (Address|Leak|Memory|Thread|UndefinedBehavior)Sanitizer|WARNING: (Thread|Memory)Sanitizer|: runtime error: |SUMMARY: [A-Za-z]+Sanitizer'

# e2e_judge_processes: stops the spawned processes still running (SIGTERM,
# then SIGKILL after 30 s), and prints each process that ended badly and
# each sanitizer report found under $E2E_TMP; fails when there is one.
e2e_judge_processes() {
  local pid bad=0 deadline file line
  for pid in "${E2E_PIDS[@]}"; do
    [ -z "${E2E_STATUS[$pid]:-}" ] || continue
    E2E_OK[$pid]="${E2E_OK[$pid]:-0} 143"
    kill -TERM "$pid" 2>/dev/null || true
  done
  deadline=$((SECONDS + 30))
  for pid in "${E2E_PIDS[@]}"; do
    [ -z "${E2E_STATUS[$pid]:-}" ] || continue
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "FAIL - still running 30 s after SIGTERM, killed: ${E2E_WHAT[$pid]}"
      kill -KILL "$pid" 2>/dev/null || true
      bad=1
    fi
    e2e_wait "$pid"
  done
  for pid in "${E2E_PIDS[@]}"; do
    [ -z "${E2E_JUDGED[$pid]:-}" ] || continue
    case " ${E2E_OK[$pid]} " in *" ${E2E_STATUS[$pid]} "*) continue ;; esac
    local how="exit status ${E2E_STATUS[$pid]}"
    [ "${E2E_STATUS[$pid]}" -gt 128 ] && how="killed by SIG$(kill -l "${E2E_STATUS[$pid]}" 2>/dev/null)"
    echo "FAIL - a background process ended unexpectedly ($how): ${E2E_WHAT[$pid]}"
    echo "--- last lines of ${E2E_LOG[$pid]}:"
    tail -n "${E2E_LOG_LINES:-40}" "${E2E_LOG[$pid]}" 2>/dev/null || true
    bad=1
  done
  while IFS= read -r file; do
    line=$(grep -nE -m1 "$E2E_SANITIZER_REPORT" "$file" | cut -d: -f1)
    echo "FAIL - a sanitizer report in ${file#"$E2E_TMP"/}:"
    sed -n "$((line > 5 ? line - 5 : 1)),$((line + 80))p" "$file"
    bad=1
  done < <(grep -rIlE "$E2E_SANITIZER_REPORT" "$E2E_TMP" 2>/dev/null || true)
  return $bad
}
e2e_cleanup() {
  local rc=$?
  trap - EXIT
  if ! e2e_judge_processes && { [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; }; then rc=1; fi
  rm -rf "$E2E_TMP"
  exit "$rc"
}
trap e2e_cleanup EXIT

E2E_FAILURES=0

# Exits 77 (CTest SKIP_RETURN_CODE, set for the test in test/CMakeLists.txt)
# when BIN was built with ASan/UBSan, saying why the test means nothing there.
skip_if_sanitizer_build() {  # skip_if_sanitizer_build BIN "why"
  if readelf -d "$1" | grep -q 'libasan\|libubsan'; then
    skip "$(basename "$1") is a sanitizer build: $2"
  fi
}
# skip "why": the test means nothing here; exits 77 (CTest's SKIP_RETURN_CODE,
# which test/CMakeLists.txt sets for the tests that may skip), or 1 when a
# check already failed.
skip() {
  [ "$E2E_FAILURES" -eq 0 ] || finish
  echo "skip: $*"
  exit 77
}
pass() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; E2E_FAILURES=$((E2E_FAILURES + 1)); }
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
  if [ "$E2E_FAILURES" -ne 0 ]; then
    echo "$E2E_FAILURES check(s) failed"
    # What the program said, before the temp dir goes (the test's own log files).
    for log in "$E2E_TMP"/*.log; do
      [ -f "$log" ] || continue
      echo "--- last lines of $(basename "$log"):"
      tail -n "${E2E_LOG_LINES:-40}" "$log"
    done
    exit 1
  fi
  echo "all checks passed"
}

# wait_for_log FILE PATTERN SECONDS: waits until PATTERN appears in FILE.
wait_for_log() {
  local file=$1 pattern=$2 deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    grep -q "$pattern" "$file" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "timed out waiting for '$pattern' in $file:"; cat "$file"
  return 1
}

# json_get JSON_TEXT PYTHON_EXPR: evaluates EXPR with `d` bound to the document.
json_get() { /usr/bin/python3 -c "import json,sys; d=json.loads(sys.argv[1]); print($2)" "$1"; }

# start_serve LOG [ARGS...]: starts `fedmetrics serve` on a free loopback port
# with its certificate in $E2E_TMP/certs, waits for it, and sets $url, $ca,
# $serve_pid and $E2E_TMP/kubeconfig (a kubeconfig for kubectl, token auth).
# SIGTERM ends it without the product's 2 s shutdown delay unless
# E2E_SHUTDOWN_DELAY says otherwise.
start_serve() {
  local log=$1; shift
  spawn "$log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs" \
    --insecure-development-no-auth --shutdown-delay-duration "${E2E_SHUTDOWN_DELAY:-0s}" "$@"
  serve_pid=$spawned
  wait_for_log "$log" "serving on https://127.0.0.1:" 10
  port=$(grep -o 'https://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://')
  url="https://127.0.0.1:$port"
  ca="$E2E_TMP/certs/apiserver.crt"
  cat >"$E2E_TMP/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: fedmetrics
  cluster: {server: "$url", certificate-authority: "$ca"}
users:
- name: dev
  user: {token: development}
contexts:
- name: fedmetrics
  context: {cluster: fedmetrics, user: dev, namespace: ${E2E_NAMESPACE:-default}}
current-context: fedmetrics
KUBECONFIG
}
k() { kubectl --kubeconfig "$E2E_TMP/kubeconfig" --request-timeout=10s "$@"; }

# start_sim WORLD_FILE [SIM FLAGS...]: `fedmetrics sim` with its out-dir in
# $E2E_TMP/world and its log in $E2E_TMP/sim.log; waits for the world and
# sets $control (the simulator's control API) and $karmada (the simulated
# control plane's URL).
start_sim() {
  local world=$1; shift
  spawn "$E2E_TMP/sim.log" "$bin" sim --world "$world" --out-dir "$E2E_TMP/world" "$@"
  wait_for_log "$E2E_TMP/sim.log" "world ready" 10
  control=$(grep -o 'control serving on https://127.0.0.1:[0-9]*' "$E2E_TMP/sim.log" | head -1 | sed 's/control serving on //')
  karmada=$(grep -o 'karmada serving on https://127.0.0.1:[0-9]*' "$E2E_TMP/sim.log" | head -1 | sed 's/karmada serving on //')
}

# kk ARGS...: kubectl against the simulated Karmada control plane, as its admin.
kk() { kubectl --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --request-timeout=10s "$@"; }

# wait_until SECONDS COMMAND...: runs COMMAND every $WAIT_UNTIL_INTERVAL
# seconds (0.5: most commands here start kubectl) until it succeeds; fails
# when SECONDS have passed.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep "${WAIT_UNTIL_INTERVAL:-0.5}"
  done
}

# aggregated_world: the karmada e2e federation (test/e2e/karmada.world.yaml)
# with an `aggregation` section, so that the simulated control plane starts
# with the APIServices registered for a fedmetrics on 127.0.0.1:$port.
# Writes $E2E_TMP/world.yaml and fedmetrics' certificates to $E2E_TMP/certs
# (certs/generate.sh), and sets $port to a free port. Needs $src.
aggregated_world() {
  bash "$src/certs/generate.sh" "$E2E_TMP/certs" fedmetrics fedmetrics-system >/dev/null
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  sed -n '/^members:/,$p' "$src/test/e2e/karmada.world.yaml" >"$E2E_TMP/world.yaml"
  cat >>"$E2E_TMP/world.yaml" <<YAML
aggregation:
  address: 127.0.0.1
  port: $port
  caFile: certs/ca.crt
YAML
}

# start_aggregated_serve MEMBER_TIMEOUT [FLAGS...]: `fedmetrics serve` on $port with the
# certificates of aggregated_world, delegating to the world's control plane
# and asking its members (after start_sim), the one the APIServices point
# at; waits until it serves. Log: $E2E_TMP/serve.log.
start_aggregated_serve() {
  spawn "$E2E_TMP/serve.log" "$bin" serve --secure-port "$port" --bind-address 127.0.0.1 \
    --tls-cert-file "$E2E_TMP/certs/serving.crt" --tls-private-key-file "$E2E_TMP/certs/serving.key" \
    --authentication-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" --authorization-kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
    --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" --member-timeout "$1" "${@:2}"
  wait_for_log "$E2E_TMP/serve.log" "serving on https://127.0.0.1:" 10
}

# km MEMBER ARGS...: kubectl through a simulated member's own context in
# members.kubeconfig (after start_sim).
km() { kubectl --kubeconfig "$E2E_TMP/world/members.kubeconfig" --context "$1" --request-timeout=10s "${@:2}"; }

# start_replica NAME [FLAGS...]: a `fedmetrics serve --enable-autoscaler`
# replica on the world of start_sim with leader election on short periods
# (Lease 3 s, renew deadline 2 s, retry 250 ms) and FLAGS, logging to
# $E2E_TMP/NAME.log; sets pid_NAME. identity_of NAME: its Lease identity.
start_replica() {
  local name=$1; shift
  spawn "$E2E_TMP/$name.log" "$bin" serve --secure-port 0 --bind-address 127.0.0.1 --cert-dir "$E2E_TMP/certs-$name" --insecure-development-no-auth \
    --member-kubeconfig "$E2E_TMP/world/members.kubeconfig" \
    --enable-autoscaler --kubeconfig "$E2E_TMP/world/karmada.kubeconfig" \
    --leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s --leader-elect-retry-period 250ms "$@"
  eval "pid_$name=$spawned"
  wait_for_log "$E2E_TMP/$name.log" "serving on https://127.0.0.1:" 10
}
# holder: the autoscaler Lease's holder identity; holder_is ID: it is ID (for wait_until).
holder() { kk get lease -n kube-system fedmetrics-autoscaler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
holder_is() { test "$(holder)" = "$1"; }
identity_of() { grep -o 'leader election on Lease kube-system/fedmetrics-autoscaler as [^ ]*' "$E2E_TMP/$1.log" | awk '{print $NF}'; }

# sim_put PATH JSON: PUTs JSON to the simulator's control API (after
# start_sim), for example a workload's load; prints the HTTP status.
sim_put() { curl -sk -o /dev/null -w '%{http_code}' -X PUT "$control$1" -H 'Content-Type: application/json' -d "$2"; }

# member_pods MEMBER: how many app=nginx pods MEMBER runs, Terminating ones not counted.
member_pods() { km "$1" get pods -l app=nginx --no-headers 2>/dev/null | grep -vc Terminating || true; }

# member_pods_are MEMBER N: succeeds when member_pods MEMBER is N (for wait_until).
member_pods_are() { [ "$(member_pods "$1")" = "$2" ]; }

# member_hpa_yaml MIN MAX: an autoscaling/v2 HorizontalPodAutoscaler "nginx"
# of Deployment nginx, cpu at 50% of its request, for a member.
member_hpa_yaml() {
  cat <<YAML
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: nginx
  namespace: default
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: $1
  maxReplicas: $2
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
YAML
}
